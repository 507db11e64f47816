//! M3: no panic on bad input: each pure rule of the listen stream and of the log level gets
//! thousands of generated values (a fixed seed, so that a failure repeats), mixed with pieces of
//! real messages. (The generator, crate::test_support::values, is the one of the rules of M2.)

use crate::listen::filter::classify;
use crate::listen::replay::{Declared, Subscriptions, gap_replay, listen_params, subscription_uri};
use crate::test_support::values::{Rng, value};
use crate::translate::level::{LogLevel, log_message_for_client, set_level_params};
use serde_json::json;

#[test]
fn m3_every_listen_rule_takes_any_value_without_a_panic() {
    let mut rng = Rng(0x5eed);
    for _ in 0..20_000 {
        let v = value(&mut rng, 5);
        let _ = classify(&v);
        let _ = classify(&json!({"method": "notifications/resources/updated", "params": v}));
        let _ =
            classify(&json!({"method": "notifications/subscriptions/acknowledged", "params": v}));
        for level in [None, Some(LogLevel::Debug), Some(LogLevel::Emergency)] {
            let _ = log_message_for_client(&v, level);
        }
        let _ = set_level_params(Some(&v));
        let declared = Declared::from_initialize_result(&v);
        if let Some(uri) = subscription_uri(Some(&v)) {
            let subs = Subscriptions::default();
            let _ = subs.subscribe(uri);
            let _ = subs.unsubscribe(uri);
            let _ = listen_params(&declared, &[uri.to_owned()]);
            let _ = gap_replay(&declared, &[uri.to_owned()]);
        }
    }
}
