//! The reconnect policy of the listen stream and its log lines (M3; the texts of the
//! table of docs/stderr.md).

use std::time::Duration;

use crate::errors::format_limit;

/// The first wait after a lost stream.
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A stream that lived this long after its acknowledgment resets the wait at its end.
pub const STABLE_PERIOD: Duration = Duration::from_secs(10);

/// The wait before a new stream: 0.5 s, doubling to 30 s; reset after a stream that lived
/// 10 s after its acknowledgment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new()
    }
}

impl Backoff {
    pub fn new() -> Self {
        Backoff {
            next: INITIAL_BACKOFF,
        }
    }

    pub fn reset(&mut self) {
        self.next = INITIAL_BACKOFF;
    }

    /// A stream ended; `lived_after_ack` is how long it lived after its acknowledgment (`None`
    /// when it never acknowledged). Returns the wait before the next stream.
    pub fn next_wait(&mut self, lived_after_ack: Option<Duration>) -> Duration {
        if lived_after_ack.is_some_and(|d| d >= STABLE_PERIOD) {
            self.reset();
        }
        let wait = self.next;
        self.next = self.next.saturating_mul(2).min(MAX_BACKOFF);
        wait
    }
}

/// How a listen stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// The upstream server ended the stream with a result (for example at its stop).
    Result,
    /// The connection closed, the transport failed, or a time limit passed; the text names it.
    Lost(String),
    /// The bridge cancelled the stream (a replacement, or the end of input).
    Canceled,
    /// The upstream server refused the stream with a JSON-RPC error.
    Refused { code: i64, message: String },
    /// An HTTP status without a JSON-RPC answer; `sign_in` when a sign-in can answer a 401/403.
    HttpStatus { status: u16, sign_in: bool },
}

/// The level of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
}

/// A log line of the bridge (scope `bridge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub level: Level,
    pub text: String,
}

impl LogLine {
    fn info(text: String) -> Self {
        LogLine {
            level: Level::Info,
            text,
        }
    }
    fn warning(text: String) -> Self {
        LogLine {
            level: Level::Warning,
            text,
        }
    }
}

/// What comes after the end of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Open a new stream after this wait; its acknowledgment gives the gap replay.
    RetryAfter(Duration),
    /// Wait until a sign-in of another request completes, then open a new stream
    /// (`sign_in_completed` line).
    AfterSignIn,
    /// No new stream until the next change of the subscriptions.
    Stop,
}

/// The decision at the end of a stream, with its log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndDecision {
    pub next: Next,
    pub log: Option<LogLine>,
}

/// M3: the decision at the end of a listen stream. `upstream_gone`: the upstream server
/// stopped (the bridge exits; no new stream and no line of the listener).
pub fn on_stream_end(
    end: &StreamEnd,
    upstream_gone: bool,
    lived_after_ack: Option<Duration>,
    backoff: &mut Backoff,
) -> EndDecision {
    let stop = |log| EndDecision {
        next: Next::Stop,
        log,
    };
    if upstream_gone || *end == StreamEnd::Canceled {
        return stop(None);
    }
    let mut retry = |line: &dyn Fn(&str) -> LogLine| {
        let wait = backoff.next_wait(lived_after_ack);
        EndDecision {
            next: Next::RetryAfter(wait),
            log: Some(line(&format_limit(wait))),
        }
    };
    match end {
        StreamEnd::Result => retry(&|t| {
            LogLine::info(format!(
                "the upstream server ended the listen stream. A new stream follows in {t}."
            ))
        }),
        StreamEnd::Lost(error) => retry(&|t| {
            LogLine::warning(format!(
                "the listen stream ended: {error}. A new stream follows in {t}."
            ))
        }),
        StreamEnd::Refused { code, message } => stop(Some(LogLine::warning(format!(
            "the upstream server refused the listen stream with the error {code}: {message}. The bridge sends no more list changes."
        )))),
        StreamEnd::HttpStatus { status, sign_in } => {
            let status = *status;
            let transient =
                status == 408 || status == 429 || ((500..600).contains(&status) && status != 501);
            if transient {
                retry(&|t| {
                    LogLine::warning(format!(
                        "the listen stream ended with the HTTP status {status}. A new stream follows in {t}."
                    ))
                })
            } else if (status == 401 || status == 403) && *sign_in {
                EndDecision {
                    next: Next::AfterSignIn,
                    log: Some(LogLine::warning(format!(
                        "the listen stream failed with the HTTP status {status}. A new stream follows after the next sign-in."
                    ))),
                }
            } else {
                stop(Some(LogLine::warning(format!(
                    "the listen stream failed with the HTTP status {status}. The bridge sends no more list changes."
                ))))
            }
        }
        StreamEnd::Canceled => stop(None),
    }
}

/// Info: a sign-in of another request completed after a 401/403 of the stream.
pub fn sign_in_completed() -> LogLine {
    LogLine::info("a sign-in completed. The bridge opens the listen stream again.".to_owned())
}

/// Warning: the first listen stream cannot start.
pub fn cannot_start(error: &str) -> LogLine {
    LogLine::warning(format!(
        "cannot start the listen stream: {error}. The client gets no list changes."
    ))
}

/// Warning: the new stream of a subscription change failed before its acknowledgment (the
/// old stream and subscriptions stay; the client gets the error).
pub fn subscription_change_failed(error: &str) -> LogLine {
    LogLine::warning(format!(
        "the listen stream for a change of the subscriptions failed: {error}"
    ))
}

/// The cancellation reasons of listen streams (sent upstream).
pub mod reason {
    pub const REPLACED: &str = "the bridge replaced the listen stream";
    pub const CLIENT_CLOSED: &str = "the client closed the connection";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn m3_backoff_doubles_from_half_a_second_to_thirty() {
        let mut b = Backoff::new();
        let waits: Vec<_> = (0..9).map(|_| b.next_wait(None)).collect();
        assert_eq!(
            waits,
            [
                ms(500),
                ms(1000),
                ms(2000),
                ms(4000),
                ms(8000),
                ms(16000),
                ms(30000),
                ms(30000),
                ms(30000)
            ]
        );
    }

    #[test]
    fn m3_backoff_resets_after_a_stream_that_lived_ten_seconds() {
        let mut b = Backoff::new();
        for _ in 0..5 {
            b.next_wait(Some(ms(9_999)));
        }
        assert_eq!(b.next, ms(16000));
        assert_eq!(b.next_wait(Some(Duration::from_secs(10))), ms(500));
        assert_eq!(b.next_wait(Some(ms(100))), ms(1000));
        assert_eq!(b.next_wait(None), ms(2000));
    }

    #[test]
    fn m3_end_with_a_result_retries_with_the_info_line() {
        let mut b = Backoff::new();
        let d = on_stream_end(&StreamEnd::Result, false, None, &mut b);
        assert_eq!(d.next, Next::RetryAfter(ms(500)));
        assert_eq!(
            d.log,
            Some(LogLine {
                level: Level::Info,
                text:
                    "the upstream server ended the listen stream. A new stream follows in 500 ms."
                        .into()
            })
        );
        let d = on_stream_end(&StreamEnd::Result, false, None, &mut b);
        assert_eq!(
            d.log.expect("a value").text,
            "the upstream server ended the listen stream. A new stream follows in 1 s."
        );
    }

    #[test]
    fn m3_lost_stream_retries_with_the_warning_line() {
        let mut b = Backoff::new();
        let d = on_stream_end(
            &StreamEnd::Lost("the connection closed".into()),
            false,
            None,
            &mut b,
        );
        assert_eq!(d.next, Next::RetryAfter(ms(500)));
        assert_eq!(d.log.expect("a value"), LogLine { level: Level::Warning, text: "the listen stream ended: the connection closed. A new stream follows in 500 ms.".into() });
    }

    #[test]
    fn m3_refusal_stops_list_changes() {
        let mut b = Backoff::new();
        let d = on_stream_end(
            &StreamEnd::Refused {
                code: -32603,
                message: "Subscription filter too large".into(),
            },
            false,
            None,
            &mut b,
        );
        assert_eq!(d.next, Next::Stop);
        assert_eq!(
            d.log.expect("a value").text,
            "the upstream server refused the listen stream with the error -32603: Subscription filter too large. The bridge sends no more list changes."
        );
        assert_eq!(b.next, ms(500));
    }

    #[test]
    fn m3_cancel_and_upstream_loss_stop_silently() {
        let mut b = Backoff::new();
        assert_eq!(
            on_stream_end(&StreamEnd::Canceled, false, None, &mut b),
            EndDecision {
                next: Next::Stop,
                log: None
            }
        );
        assert_eq!(
            on_stream_end(&StreamEnd::Result, true, None, &mut b),
            EndDecision {
                next: Next::Stop,
                log: None
            }
        );
        assert_eq!(
            on_stream_end(&StreamEnd::Lost("x".into()), true, None, &mut b),
            EndDecision {
                next: Next::Stop,
                log: None
            }
        );
    }

    /// The end of a stream, never acknowledged, by an HTTP status while the upstream runs.
    fn http_end(status: u16, sign_in: bool, b: &mut Backoff) -> EndDecision {
        on_stream_end(&StreamEnd::HttpStatus { status, sign_in }, false, None, b)
    }

    #[test]
    fn m3_http_statuses() {
        for status in [408u16, 429, 500, 502, 503, 599] {
            let mut b = Backoff::new();
            let d = http_end(status, true, &mut b);
            assert_eq!(d.next, Next::RetryAfter(ms(500)), "{status}");
            assert_eq!(
                d.log.expect("a value").text,
                format!(
                    "the listen stream ended with the HTTP status {status}. A new stream follows in 500 ms."
                )
            );
        }
        for status in [401u16, 403] {
            let mut b = Backoff::new();
            let d = http_end(status, true, &mut b);
            assert_eq!(d.next, Next::AfterSignIn);
            assert_eq!(
                d.log.expect("a value").text,
                format!(
                    "the listen stream failed with the HTTP status {status}. A new stream follows after the next sign-in."
                )
            );
            let d = http_end(status, false, &mut b);
            assert_eq!(d.next, Next::Stop);
        }
        for status in [400u16, 404, 405, 501, 302] {
            let mut b = Backoff::new();
            let d = http_end(status, true, &mut b);
            assert_eq!(d.next, Next::Stop, "{status}");
            assert_eq!(
                d.log.expect("a value").text,
                format!(
                    "the listen stream failed with the HTTP status {status}. The bridge sends no more list changes."
                )
            );
        }
    }

    #[test]
    fn m3_other_lines() {
        assert_eq!(
            sign_in_completed().text,
            "a sign-in completed. The bridge opens the listen stream again."
        );
        assert_eq!(
            cannot_start("x").text,
            "cannot start the listen stream: x. The client gets no list changes."
        );
        assert_eq!(
            subscription_change_failed("x").text,
            "the listen stream for a change of the subscriptions failed: x"
        );
    }
}
