//! `--start-delay S`: a server that starts slowly, as servers started through `npx`, `uvx` or
//! Docker do (docs/fixture.md). The fixture waits before it reads stdin or binds its address,
//! so that everything a client writes meanwhile waits in the pipe, unread, and no connection
//! is accepted.
use std::time::Duration;

/// The longest delay: ten minutes, beyond every client's start budget.
pub const MAX_DELAY_S: f64 = 600.0;

/// The value parser of `--start-delay`: seconds, fractions allowed, from 0 to [`MAX_DELAY_S`].
pub fn delay(text: &str) -> Result<Duration, String> {
    let fail = || format!("--start-delay needs seconds from 0 to {MAX_DELAY_S}, not '{text}'");
    let seconds: f64 = text.parse().map_err(|_| fail())?;
    if !(0.0..=MAX_DELAY_S).contains(&seconds) {
        return Err(fail());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Waits the delay of the options, if any, before the transport starts.
pub async fn wait(delay: Option<Duration>) {
    if let Some(delay) = delay {
        crate::log::info("start", &format!("starting in {} ms", delay.as_millis()));
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_fractional_seconds_and_refuses_the_rest() {
        assert_eq!(delay("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(delay("0"), Ok(Duration::ZERO));
        for bad in ["-1", "601", "soon", "NaN", "inf", ""] {
            assert!(delay(bad).is_err(), "{bad}");
        }
    }
}
