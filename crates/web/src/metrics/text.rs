//! Prometheus's text exposition format (version 0.0.4), written by hand: `# HELP` and
//! `# TYPE` once per family before its samples, label values escaped (`\\`, `\"`, `\n`),
//! a histogram's buckets cumulative with `le` ending at `+Inf`, then its `_sum` and `_count`.

use std::fmt::Write;

/// The content type a scraper expects of this format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metric family's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    Counter,
    Histogram,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Histogram => "histogram",
        }
    }
}

/// One histogram's samples: the count within each bound (cumulative), the sum and count.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// (upper bound, observations at most that).
    pub buckets: Vec<(f64, u64)>,
    pub sum: f64,
    pub count: u64,
}

/// The exposition being written.
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    /// Starts family `name`: its help line and type.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {}", kind.as_str());
    }

    /// One sample of the family just started.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.text.push_str(name);
        write_labels(&mut self.text, labels, None);
        let _ = writeln!(self.text, " {}", number(value));
    }

    /// One histogram's samples (family `name` just started as a histogram).
    pub fn histogram(&mut self, name: &str, labels: &[(&str, &str)], histogram: &Histogram) {
        for (bound, within) in &histogram.buckets {
            self.text.push_str(name);
            self.text.push_str("_bucket");
            write_labels(&mut self.text, labels, Some(&number(*bound)));
            let _ = writeln!(self.text, " {within}");
        }
        self.text.push_str(name);
        self.text.push_str("_bucket");
        write_labels(&mut self.text, labels, Some("+Inf"));
        let _ = writeln!(self.text, " {}", histogram.count);
        self.text.push_str(name);
        self.text.push_str("_sum");
        write_labels(&mut self.text, labels, None);
        let _ = writeln!(self.text, " {}", number(histogram.sum));
        self.text.push_str(name);
        self.text.push_str("_count");
        write_labels(&mut self.text, labels, None);
        let _ = writeln!(self.text, " {}", histogram.count);
    }

    pub fn into_text(self) -> String {
        self.text
    }
}

/// `{a="x",le="1"}`, or nothing for no labels.
fn write_labels(text: &mut String, labels: &[(&str, &str)], le: Option<&str>) {
    if labels.is_empty() && le.is_none() {
        return;
    }
    text.push('{');
    let all = labels.iter().copied().chain(le.map(|le| ("le", le)));
    for (at, (name, value)) in all.enumerate() {
        if at > 0 {
            text.push(',');
        }
        let _ = write!(text, "{name}=\"");
        for c in value.chars() {
            match c {
                '\\' => text.push_str("\\\\"),
                '"' => text.push_str("\\\""),
                '\n' => text.push_str("\\n"),
                c => text.push(c),
            }
        }
        text.push('"');
    }
    text.push('}');
}

/// A sample's value as the format writes it: integers without a fraction, infinities as
/// `+Inf`/`-Inf`, `NaN`.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_samples_and_histograms_are_written_as_prometheus_reads_them() {
        let mut out = Exposition::default();
        out.family("ganger_queue_items", Kind::Gauge, "Items in the queue.");
        out.sample("ganger_queue_items", &[("state", "queued")], 3.0);
        out.sample("ganger_queue_items", &[("state", "a\"b\\c\nd")], 0.5);
        out.family("ganger_round_duration_seconds", Kind::Histogram, "Rounds.");
        out.histogram(
            "ganger_round_duration_seconds",
            &[("agent", "opencode")],
            &Histogram {
                buckets: vec![(1.0, 2), (0.25, 2)],
                sum: 1.5,
                count: 3,
            },
        );
        out.family("ganger_store_up", Kind::Gauge, "Up.");
        out.sample("ganger_store_up", &[], 1.0);
        assert_eq!(
            out.into_text(),
            "# HELP ganger_queue_items Items in the queue.\n\
             # TYPE ganger_queue_items gauge\n\
             ganger_queue_items{state=\"queued\"} 3\n\
             ganger_queue_items{state=\"a\\\"b\\\\c\\nd\"} 0.5\n\
             # HELP ganger_round_duration_seconds Rounds.\n\
             # TYPE ganger_round_duration_seconds histogram\n\
             ganger_round_duration_seconds_bucket{agent=\"opencode\",le=\"1\"} 2\n\
             ganger_round_duration_seconds_bucket{agent=\"opencode\",le=\"0.25\"} 2\n\
             ganger_round_duration_seconds_bucket{agent=\"opencode\",le=\"+Inf\"} 3\n\
             ganger_round_duration_seconds_sum{agent=\"opencode\"} 1.5\n\
             ganger_round_duration_seconds_count{agent=\"opencode\"} 3\n\
             # HELP ganger_store_up Up.\n\
             # TYPE ganger_store_up gauge\n\
             ganger_store_up 1\n"
        );
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(0.001), "0.001");
    }
}
