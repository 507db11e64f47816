//! L3: the table of an older upstream server's requests to VS Code that wait for an answer
//! (`elicitation/create` in form and URL mode, `sampling/createMessage`, `roots/list`, `ping`),
//! and the registry of the URL elicitations that the server opened (O1), as pure state.
//!
//! - L3: at most [`MAX_ASKED_IN_FLIGHT`] of the server's requests wait for VS Code at once, the
//!   same number as the input requests of one round (R8). One more is refused: the server gets
//!   the error of [`OverLimit::error_object`] (`too_many_input_requests`), VS Code nothing, and
//!   stderr the warning of [`OverLimit::warning`].
//! - L3, O1: the server's `notifications/elicitation/complete` reaches VS Code only for a URL
//!   elicitation that the server itself opened and that is still open ([`Asked::complete`]); so
//!   a server cannot close an elicitation of the bridge (the sign-in prompt) or one it never
//!   opened. The registry keeps at most [`MAX_OPEN_URL_ELICITATIONS`] ids: when full, the oldest
//!   is forgotten.
//!
//! Value in, value out: no I/O, no clock. `front/older/` does the I/O.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use super::error::InputError;
use super::parse::MAX_INPUT_REQUESTS_PER_ROUND;
use crate::errors::Cause;

/// L3: at most this many requests of an older server wait for VS Code at once: the limit of
/// the input requests of one round (R8).
pub const MAX_ASKED_IN_FLIGHT: usize = MAX_INPUT_REQUESTS_PER_ROUND;

/// L3, O1: at most this many URL elicitations of the server are open at once in the registry;
/// an older one is forgotten first (its `notifications/elicitation/complete` then stays with
/// the bridge).
pub const MAX_OPEN_URL_ELICITATIONS: usize = 64;

/// L3: a request of the server over [`MAX_ASKED_IN_FLIGHT`]; it does not reach VS Code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverLimit {
    /// The limit that the request would exceed.
    pub limit: usize,
}

impl OverLimit {
    /// L3: the failure in the error table: `too_many_input_requests`, with the detail
    /// `<n> requests of the upstream server wait for the client, limit: <n>`.
    pub fn input_error(&self) -> InputError {
        InputError::new(
            Cause::TooManyInputRequests,
            format!(
                "{} requests of the upstream server wait for the client, limit: {}",
                self.limit, self.limit
            ),
        )
    }

    /// L3: the error object of the response that the server gets for the refused request.
    pub fn error_object(&self) -> Value {
        self.input_error().to_error_object()
    }

    /// L3: the text of the warning line of the refused request (docs/stderr.md):
    /// `refused the request <method> of the upstream server: too_many_input_requests: <detail>`.
    pub fn warning(&self, method: &str) -> String {
        format!(
            "refused the request {method} of the upstream server: {}",
            self.input_error()
        )
    }
}

/// L3: the server's requests that wait for VS Code (by the key of the server's id, with the
/// bridge's `b-` id of the request to VS Code), and the URL elicitations that the server
/// opened (O1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asked {
    in_flight: HashMap<String, String>,
    open_urls: VecDeque<String>,
}

impl Asked {
    pub fn new() -> Self {
        Asked::default()
    }

    /// L3: whether one more request of the server may go to VS Code now (for a caller that
    /// learns the bridge's id only when the request goes out: ask first, then [`Asked::admit`]).
    pub fn room(&self) -> Result<(), OverLimit> {
        if self.in_flight.len() >= MAX_ASKED_IN_FLIGHT {
            return Err(OverLimit {
                limit: MAX_ASKED_IN_FLIGHT,
            });
        }
        Ok(())
    }

    /// L3: records a request of the server (the key of its id) that goes to VS Code as
    /// `bridge_id`. Over [`MAX_ASKED_IN_FLIGHT`] nothing is recorded: the caller answers the
    /// server with [`OverLimit::error_object`] and sends nothing to VS Code. A key already in
    /// flight (the server used an id twice) keeps its one place: the new bridge id replaces the
    /// former one.
    pub fn admit(&mut self, server_id_key: String, bridge_id: String) -> Result<(), OverLimit> {
        if let Some(entry) = self.in_flight.get_mut(&server_id_key) {
            *entry = bridge_id;
            return Ok(());
        }
        self.room()?;
        self.in_flight.insert(server_id_key, bridge_id);
        Ok(())
    }

    /// L3: the request of the server ended (VS Code answered, the server cancelled it, the wait
    /// ended): its place is free. The bridge's id of it, if it was in flight.
    pub fn remove(&mut self, server_id_key: &str) -> Option<String> {
        self.in_flight.remove(server_id_key)
    }

    /// L3, O1: a URL-mode `elicitation/create` of the server with this `elicitationId` went to
    /// VS Code: the server may complete it once. An id that is open already stays open once;
    /// when [`MAX_OPEN_URL_ELICITATIONS`] are open, the oldest is forgotten.
    pub fn opened_url(&mut self, elicitation_id: &str) {
        if self.open_urls.iter().any(|open| open == elicitation_id) {
            return;
        }
        if self.open_urls.len() >= MAX_OPEN_URL_ELICITATIONS {
            self.open_urls.pop_front();
        }
        self.open_urls.push_back(elicitation_id.to_owned());
    }

    /// L3, O1: the server sent `notifications/elicitation/complete` for this id. True (and the
    /// id is forgotten) only when the server opened it and it is still open: then the
    /// notification goes to VS Code; otherwise it stays with the bridge.
    pub fn complete(&mut self, elicitation_id: &str) -> bool {
        match self
            .open_urls
            .iter()
            .position(|open| open == elicitation_id)
        {
            Some(at) => {
                self.open_urls.remove(at);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::input::complete::ElicitationIds;

    fn full() -> Asked {
        let mut asked = Asked::new();
        for n in 0..MAX_ASKED_IN_FLIGHT {
            asked
                .admit(format!("{n}"), format!("b-{n}"))
                .expect("below the limit");
        }
        asked
    }

    #[test]
    fn l3_the_limit_of_requests_in_flight_is_that_of_a_round() {
        assert_eq!(MAX_ASKED_IN_FLIGHT, MAX_INPUT_REQUESTS_PER_ROUND);
        assert_eq!(full().in_flight.len(), 16);
    }

    #[test]
    fn l3_a_request_over_the_limit_is_refused_and_not_recorded() {
        let mut asked = full();
        assert_eq!(asked.room(), Err(OverLimit { limit: 16 }));
        assert_eq!(
            asked.admit("\"x\"".into(), "b-99".into()),
            Err(OverLimit { limit: 16 })
        );
        assert_eq!(asked.in_flight.len(), 16);
        assert_eq!(asked.in_flight.get("\"x\"").map(String::as_str), None);
        assert_eq!(asked.remove("\"x\""), None);
    }

    #[test]
    fn l3_a_removed_request_frees_its_place() {
        let mut asked = full();
        assert_eq!(asked.remove("3"), Some("b-3".to_owned()));
        assert_eq!(asked.in_flight.len(), 15);
        assert!(!asked.in_flight.is_empty());
        assert_eq!(asked.room(), Ok(()));
        assert_eq!(asked.admit("\"x\"".into(), "b-99".into()), Ok(()));
        assert_eq!(
            asked.in_flight.get("\"x\"").map(String::as_str),
            Some("b-99")
        );
        assert!(asked.admit("\"y\"".into(), "b-100".into()).is_err());
        // Removed once: a second removal finds nothing.
        assert_eq!(asked.remove("3"), None);
        for n in (0..16).filter(|n| *n != 3) {
            assert!(asked.remove(&n.to_string()).is_some());
        }
        assert_eq!(asked.remove("\"x\""), Some("b-99".to_owned()));
        assert!(asked.in_flight.is_empty());
    }

    #[test]
    fn l3_an_id_used_twice_keeps_one_place_and_the_newer_bridge_id() {
        let mut asked = full();
        assert_eq!(asked.admit("0".into(), "b-77".into()), Ok(()));
        assert_eq!(asked.in_flight.len(), 16);
        assert_eq!(asked.remove("0"), Some("b-77".to_owned()));
    }

    #[test]
    fn l3_the_server_gets_too_many_input_requests_and_stderr_a_warning() {
        let over = OverLimit { limit: 16 };
        assert_eq!(
            over.error_object(),
            json!({"code": -32603, "message": Cause::TooManyInputRequests.message(), "data": {
                "cause": "too_many_input_requests",
                "detail": "16 requests of the upstream server wait for the client, limit: 16"}})
        );
        assert_eq!(
            over.warning("roots/list"),
            "refused the request roots/list of the upstream server: too_many_input_requests: 16 requests of the upstream server wait for the client, limit: 16"
        );
    }

    #[test]
    fn o1_a_url_elicitation_that_the_server_opened_completes_once() {
        let mut asked = Asked::new();
        asked.opened_url("srv-1");
        assert!(asked.complete("srv-1"));
        assert!(!asked.complete("srv-1"));
    }

    #[test]
    fn o1_an_unknown_elicitation_id_does_not_complete() {
        let mut asked = Asked::new();
        asked.opened_url("srv-1");
        assert!(!asked.complete("srv-2"));
        assert!(!asked.complete(""));
        assert!(asked.complete("srv-1"));
    }

    #[test]
    fn o1_the_server_cannot_complete_an_elicitation_of_the_bridge() {
        let mut ids = ElicitationIds::new();
        let sign_in = ids.next_id();
        let mut asked = Asked::new();
        asked.opened_url("srv-1");
        assert!(!asked.complete(&sign_in));
        // Nor the old, predictable form of the bridge's ids.
        assert!(!asked.complete("elicitation-1"));
        assert!(asked.complete("srv-1"));
    }

    #[test]
    fn o1_an_id_opened_twice_while_open_completes_once() {
        let mut asked = Asked::new();
        asked.opened_url("srv-1");
        asked.opened_url("srv-1");
        assert!(asked.complete("srv-1"));
        assert!(!asked.complete("srv-1"));
        // Opened again after its completion: it completes again.
        asked.opened_url("srv-1");
        assert!(asked.complete("srv-1"));
    }

    #[test]
    fn o1_the_registry_keeps_the_newest_ids_up_to_its_bound() {
        let mut asked = Asked::new();
        for n in 0..=MAX_OPEN_URL_ELICITATIONS {
            asked.opened_url(&format!("srv-{n}"));
        }
        // The oldest is forgotten; every newer one is open.
        assert!(!asked.complete("srv-0"));
        for n in 1..=MAX_OPEN_URL_ELICITATIONS {
            assert!(asked.complete(&format!("srv-{n}")), "srv-{n}");
        }
        assert!(asked.open_urls.is_empty());
    }

    #[test]
    fn o1_a_hostile_server_cannot_grow_the_registry() {
        let mut asked = Asked::new();
        for n in 0..10 * MAX_OPEN_URL_ELICITATIONS {
            asked.opened_url(&format!("srv-{n}"));
            assert!(asked.open_urls.len() <= MAX_OPEN_URL_ELICITATIONS);
        }
        assert_eq!(asked.open_urls.len(), MAX_OPEN_URL_ELICITATIONS);
    }
}
