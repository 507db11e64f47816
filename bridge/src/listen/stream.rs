//! Generations of listen streams (O7 and the quirk "VS Code reads the updates of a resource
//! only after the response to resources/subscribe").
//!
//! Each stream has a generation. The active generation only increases, at a stream's first
//! acknowledgment, and events are written only for the active stream (the check belongs under
//! the output lock), so no event of an old stream follows the response of a newer
//! subscription change.

/// Why a stream was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The first stream after `notifications/initialized`.
    Start,
    /// A stream that replaces a lost one.
    AfterLoss,
    /// A stream for a change of the subscriptions: its first acknowledgment answers `{}` to
    /// the client; a change alone produces no list change or update.
    SubscriptionChange,
}

/// One listen stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    pub generation: u64,
    pub purpose: Purpose,
    acknowledgments: u32,
}

impl Stream {
    pub fn acknowledged_once(&self) -> bool {
        self.acknowledgments > 0
    }
}

/// What an acknowledgment means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckOutcome {
    /// The stream's first acknowledgment made it active. `replay`: send the gap replay (first
    /// stream, stream after a loss). `answer_subscription`: write `{}` for the subscription
    /// change, then cancel the old stream.
    Activated {
        replay: bool,
        answer_subscription: bool,
    },
    /// A second acknowledgment inside the active stream (the SDK reconnected it unseen): the
    /// upstream does not replay the gap, so the bridge sends the gap replay again.
    Replay,
    /// A newer stream is active: this one writes nothing.
    Stale,
}

/// The generations of the listen streams of one connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Generations {
    issued: u64,
    active: u64,
}

impl Generations {
    /// A new stream.
    pub fn open(&mut self, purpose: Purpose) -> Stream {
        self.issued = self.issued.saturating_add(1);
        Stream {
            generation: self.issued,
            purpose,
            acknowledgments: 0,
        }
    }

    /// Whether events of this stream may be written.
    pub fn is_active(&self, stream: &Stream) -> bool {
        stream.acknowledged_once() && stream.generation == self.active
    }

    /// An acknowledgment of `stream` arrived.
    pub fn acknowledged(&mut self, stream: &mut Stream) -> AckOutcome {
        stream.acknowledgments = stream.acknowledgments.saturating_add(1);
        if stream.acknowledgments > 1 {
            return if stream.generation == self.active {
                AckOutcome::Replay
            } else {
                AckOutcome::Stale
            };
        }
        if stream.generation <= self.active {
            return AckOutcome::Stale;
        }
        self.active = stream.generation;
        AckOutcome::Activated {
            replay: stream.purpose != Purpose::SubscriptionChange,
            answer_subscription: stream.purpose == Purpose::SubscriptionChange,
        }
    }

    /// The last URI went and no list is declared: no stream is needed. No stream opened before
    /// can become active any more.
    pub fn retire_all(&mut self) {
        self.issued = self.issued.saturating_add(1);
        self.active = self.issued;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quirk_first_stream_replays_and_a_second_ack_replays_again() {
        let mut g = Generations::default();
        let mut s = g.open(Purpose::Start);
        assert!(!g.is_active(&s));
        assert_eq!(
            g.acknowledged(&mut s),
            AckOutcome::Activated {
                replay: true,
                answer_subscription: false
            }
        );
        assert!(g.is_active(&s));
        assert_eq!(g.acknowledged(&mut s), AckOutcome::Replay);
    }

    #[test]
    fn o7_subscription_stream_answers_and_silences_the_old_one() {
        let mut g = Generations::default();
        let mut old = g.open(Purpose::Start);
        g.acknowledged(&mut old);
        let mut new = g.open(Purpose::SubscriptionChange);
        // Until the new stream acknowledges, the old one stays active (a failure keeps it).
        assert!(g.is_active(&old));
        assert_eq!(
            g.acknowledged(&mut new),
            AckOutcome::Activated {
                replay: false,
                answer_subscription: true
            }
        );
        assert!(!g.is_active(&old));
        assert!(g.is_active(&new));
        // A late second acknowledgment of the old stream writes nothing.
        assert_eq!(g.acknowledged(&mut old), AckOutcome::Stale);
    }

    #[test]
    fn o7_an_older_stream_acknowledging_late_never_becomes_active() {
        let mut g = Generations::default();
        let mut a = g.open(Purpose::SubscriptionChange);
        let mut b = g.open(Purpose::SubscriptionChange);
        assert!(matches!(
            g.acknowledged(&mut b),
            AckOutcome::Activated { .. }
        ));
        assert_eq!(g.acknowledged(&mut a), AckOutcome::Stale);
        assert!(!g.is_active(&a));
    }

    #[test]
    fn o7_retire_all_when_no_stream_is_needed() {
        let mut g = Generations::default();
        let mut a = g.open(Purpose::SubscriptionChange);
        g.retire_all();
        assert_eq!(g.acknowledged(&mut a), AckOutcome::Stale);
        let mut b = g.open(Purpose::SubscriptionChange);
        assert!(matches!(
            g.acknowledged(&mut b),
            AckOutcome::Activated { .. }
        ));
    }

    #[test]
    fn m3_stream_after_loss_replays() {
        let mut g = Generations::default();
        let mut a = g.open(Purpose::Start);
        g.acknowledged(&mut a);
        let mut b = g.open(Purpose::AfterLoss);
        assert_eq!(
            g.acknowledged(&mut b),
            AckOutcome::Activated {
                replay: true,
                answer_subscription: false
            }
        );
    }
}
