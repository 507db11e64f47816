//! M4: the error of a request whose sign-in did not complete (the error table's sign-in
//! causes). The message names what to do; `data.detail` the specifics. No text names the
//! upstream URL (its path or query can hold a key, and the model reads errors).

use serde_json::Value;

use super::failure::Failure;
use super::outcome::SignInError;
use crate::errors::{Cause, error_object};

/// The error object of `error`.
pub fn sign_in_error(error: &SignInError) -> Value {
    let (cause, detail, message) = match error {
        SignInError::TimedOut {
            limit,
            browser_failed,
        } => {
            let mut message = format!(
                "The sign-in did not complete in {} s. Sign in within --sign-in-timeout (during initialize, --discover-timeout is added). When the sign-in page shows an error, run \"mcp-bridge-vscode logout <url>\" and restart the server.",
                limit.as_secs()
            );
            if *browser_failed {
                message.push_str(
                    " The browser did not open. Open the URL of the sign-in line in a browser.",
                );
            }
            (Cause::SignInTimeout, None, Some(message))
        }
        SignInError::Reauthorization(why) => (
            Cause::ReauthorizationRequired,
            Some(why.word().to_owned()),
            None,
        ),
        SignInError::Step(Failure::RegistrationUnavailable) => {
            (Cause::RegistrationUnavailable, None, None)
        }
        SignInError::Step(Failure::RegistrationRefused(code)) => {
            (Cause::RegistrationRefused, Some(code.clone()), None)
        }
        SignInError::Step(Failure::IssuerNotRegistered) => (Cause::IssuerNotRegistered, None, None),
        SignInError::Step(other) => (Cause::SignInFailed, Some(other.to_string()), None),
        SignInError::RedirectPort { port, in_use } => {
            let message = if *in_use {
                format!(
                    "Another program uses the redirect port {port}. Stop that program, or set a different port with --redirect-port."
                )
            } else {
                format!(
                    "The bridge cannot listen on the redirect port {port}. Set a different port with --redirect-port."
                )
            };
            (Cause::RedirectPortUnavailable, None, Some(message))
        }
        SignInError::InvalidUrl => (Cause::InvalidAuthorizationUrl, None, None),
        SignInError::Denied => (Cause::SignInDenied, None, None),
        SignInError::AuthorizationError(code) => {
            let message = format!(
                "The authorization server sent an error for the sign-in. The error code is {code}."
            );
            (Cause::AuthorizationError, Some(code.clone()), Some(message))
        }
        SignInError::Forbidden(status) => (
            Cause::Forbidden,
            Some(format!("HTTP status {status}")),
            None,
        ),
        SignInError::Sandbox => (Cause::Sandbox, None, None),
        SignInError::StartReused => (Cause::SignInStartReused, None, None),
        SignInError::NeedsSignIn(status) => (
            Cause::SignInFailed,
            Some(format!("HTTP status {status}")),
            None,
        ),
    };
    let mut object = error_object(cause, detail.as_deref());
    if let Some(message) = message {
        object["message"] = Value::from(message);
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::outcome::NoQuestion;
    use std::time::Duration;

    #[test]
    fn m4_each_sign_in_failure_has_its_cause_and_names_no_url() {
        let cases = [
            (
                SignInError::TimedOut {
                    limit: Duration::from_secs(300),
                    browser_failed: true,
                },
                "sign_in_timeout",
            ),
            (
                SignInError::Reauthorization(NoQuestion::Declined),
                "reauthorization_required",
            ),
            (
                SignInError::Step(Failure::RegistrationUnavailable),
                "registration_unavailable",
            ),
            (
                SignInError::RedirectPort {
                    port: 41894,
                    in_use: true,
                },
                "redirect_port_unavailable",
            ),
            (SignInError::Sandbox, "sandbox"),
            (SignInError::StartReused, "sign_in_start_reused"),
            (SignInError::Denied, "sign_in_denied"),
            (SignInError::Forbidden(403), "forbidden"),
        ];
        for (error, cause) in cases {
            let object = sign_in_error(&error);
            assert_eq!(object["data"]["cause"], cause);
            assert_eq!(object["code"], -32603);
            assert!(!object.to_string().contains("https://"), "{object}");
        }
        let timeout = sign_in_error(&SignInError::TimedOut {
            limit: Duration::from_secs(300),
            browser_failed: false,
        });
        assert!(timeout["message"].as_str().is_some_and(|m| {
            m.starts_with("The sign-in did not complete in 300 s.") && m.contains("logout")
        }));
        assert_eq!(
            sign_in_error(&SignInError::Reauthorization(NoQuestion::Cooldown))["data"]["detail"],
            "cooldown"
        );
    }
}
