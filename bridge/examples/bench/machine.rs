//! The machine a run of `--compare` measured on, and how busy others kept it: the number of
//! cores, the CPU model, the load average, and the CPU time that processes other than this
//! bench and its children took while the run went on. The machine is shared with other
//! builds; a figure of a busy hour says so beside it.

/// The CPU counters of the whole machine and of this process with its waited children, in
/// the kernel's clock ticks (`/proc/stat` and `/proc/self/stat` count in the same unit).
#[derive(Clone, Copy)]
pub(crate) struct Ticks {
    /// Every core's time outside idle and I/O wait, stolen time excluded.
    busy: u64,
    /// The time the hypervisor gave to other machines (`steal`).
    steal: u64,
    /// This process and its children that were waited for (every peer is, by `Peer::stop`).
    own: u64,
    at: std::time::Instant,
}

impl Ticks {
    pub(crate) fn now() -> Ticks {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let cpu: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        let field = |i: usize| cpu.get(i).copied().unwrap_or(0);
        // user nice system idle iowait irq softirq steal
        let busy = field(0) + field(1) + field(2) + field(5) + field(6);
        let own_stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        // The fields after the command's closing parenthesis; utime is field 14 of the line.
        let after = own_stat
            .rsplit_once(')')
            .map(|(_, r)| r)
            .unwrap_or_default();
        let fields: Vec<u64> = after
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        let own = (11..15).map(|i| fields.get(i).copied().unwrap_or(0)).sum();
        Ticks {
            busy,
            steal: field(7),
            own,
            at: std::time::Instant::now(),
        }
    }
}

/// What other processes took of the machine between two readings.
#[derive(Clone, Copy)]
pub(crate) struct Others {
    /// Their share of all cores, 0 to 1.
    pub(crate) share: f64,
    /// The hypervisor's share taken from this machine, 0 to 1.
    pub(crate) steal: f64,
}

/// Other processes took more than this share of the cores: the table calls the run busy.
pub(crate) const BUSY_SHARE: f64 = 0.10;

pub(crate) fn others(from: Ticks, to: Ticks) -> Others {
    let capacity = to.at.duration_since(from.at).as_secs_f64() * ticks_per_second() * cores();
    let others = to.busy.saturating_sub(from.busy) as f64 - to.own.saturating_sub(from.own) as f64;
    Others {
        share: (others.max(0.0) / capacity.max(1.0)).min(1.0),
        steal: (to.steal.saturating_sub(from.steal) as f64 / capacity.max(1.0)).min(1.0),
    }
}

/// USER_HZ, the unit of `/proc/stat`: 100 on every Linux port that the bridge ships for.
fn ticks_per_second() -> f64 {
    100.0
}

pub(crate) fn cores() -> f64 {
    std::thread::available_parallelism().map_or(1, usize::from) as f64
}

pub(crate) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map(|(_, m)| m.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

/// The 1-minute load average.
pub(crate) fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The UTC date and time, `YYYY-MM-DD HH:MM`.
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to the civil date (proleptic Gregorian), after H. Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60
    )
}
