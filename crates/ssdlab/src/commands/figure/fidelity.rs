//! `ssdlab figure fidelity`: one row per published comparison of the five papers, with the
//! published value, ssdlab's on the default configuration and the verdict (docs/fidelity.md
//! states the rules). Where a paper leaves a parameter open and the default does not reproduce
//! its result, the comparison is run again with the parameter set as the sensitivity maps found
//! it (a *condition*), and the verdict says under which condition the result appears.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use firmware::ftl::Precondition;
use nicfs_timed::TimedConfig;
use nicfs_timed::figures::Scale;

use super::FigureOpts;
use super::lab::{Row, Verdict};
use crate::cli::{FidelityArgs, PipessdFigureArgs};

/// One comparison: the paper it comes from and its row.
#[derive(Clone, Debug)]
pub struct Entry {
    pub paper: &'static str,
    pub row: Row,
}

/// The condition under which PipeSSD's gain is looked for when the default misses it.
const ONE_REQUEST_PER_THREAD: &str = "one request per Tradition thread";
/// The condition under which the bridge-based device's power rises after the write cliff.
const SEQ_FILLED: &str = "the cliff run from a sequentially filled device";
/// The condition under which the host-FTL card scales with workers, and its queued latency grows, as the
/// study measured (docs/fidelity.md: `figure pcie-study --map-workers` and `--map-queued`).
const ONE_HOST_CORE: &str = "one host core spending 80 us per command";
/// The condition under which NICFS's four front ends fall below two.
const SLOW_SWITCH: &str = "a 15 us NIC context switch";

pub fn run(a: &FidelityArgs) -> Result<()> {
    let started = std::time::Instant::now();
    let entries = collect(a)?;
    let md = markdown(&entries);
    println!("{md}");
    let judged: Vec<&Entry> = entries.iter().filter(|e| e.row.verdict.is_some()).collect();
    let count =
        |f: fn(&Verdict) -> bool| judged.iter().filter(|e| e.row.verdict.as_ref().is_some_and(f)).count();
    println!(
        "{} comparisons: {} reproduced, {} in direction only, {} under a stated condition, {} not ({:.0}s{})",
        judged.len(),
        count(|v| *v == Verdict::Yes),
        count(|v| *v == Verdict::Direction),
        count(|v| matches!(v, Verdict::Under(..))),
        count(|v| *v == Verdict::No),
        started.elapsed().as_secs_f64(),
        if a.quick { ", --quick: shrunk devices and short runs" } else { "" }
    );
    if let Some(path) = &a.out {
        let head = format!(
            "<!-- Written by `ssdlab figure fidelity{}{} --seed {} --out {}`; docs/fidelity.md explains the rules. Not edited by hand. -->\n\n",
            if a.quick { " --quick" } else { "" },
            if a.no_conditions { " --no-conditions" } else { "" },
            a.seed,
            path.display()
        );
        std::fs::write(path, head + &md).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &a.check {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let problems = check(&entries, &text);
        if !problems.is_empty() {
            bail!(
                "the verdicts differ from {} ({} comparisons):\n  {}\n(regenerate it with `ssdlab figure fidelity{} --out {}` if the change is meant)",
                path.display(),
                problems.len(),
                problems.join("\n  "),
                if a.quick { " --quick" } else { "" },
                path.display()
            );
        }
        eprintln!("verdicts agree with {}", path.display());
    }
    Ok(())
}

/// Runs every paper's comparisons (and the conditioned runs, unless told not to).
fn collect(a: &FidelityArgs) -> Result<Vec<Entry>> {
    let opts = FigureOpts { out: None, quick: a.quick, seed: a.seed };
    let mut entries = Vec::new();
    let mut add = |paper: &'static str, rows: Vec<Row>| {
        entries.extend(rows.into_iter().map(|row| Entry { paper, row }))
    };

    add("SoftSSD", super::softssd::lab(&opts)?.into_rows());

    let pipe = PipessdFigureArgs {
        out: PathBuf::new(),
        traces: a.traces.clone(),
        // The paper's platform as it states it (docs/architectures.md, "pipessd-paper"), at
        // full size: its DRAM is a thousandth of the full chips' capacity.
        preset: "pipessd-paper".into(),
        open_loop: Vec::new(),
        blocks: if a.quick { 256 } else { 8192 },
        depth: 32,
        requests_per_thread: None,
        quick: a.quick,
        warm_up: 0.0,
        seed: a.seed,
    };
    let mut rows = super::pipessd::rows(&super::pipessd::cells(&pipe)?);
    if !a.no_conditions {
        let one = PipessdFigureArgs { requests_per_thread: Some(1), ..pipe };
        let cond = super::pipessd::rows(&super::pipessd::cells(&one)?);
        rows = merge(rows, &cond, ONE_REQUEST_PER_THREAD);
    }
    add("PipeSSD", rows);

    add("host-FTL array", super::hostftl_array::lab(&opts)?.into_rows());
    let mut rows = super::pcie_study::lab(&opts)?.into_rows();
    if !a.no_conditions {
        let cond = super::pcie_study::cliff_lab(&opts, Precondition::SeqFill)?.into_rows();
        rows = merge(rows, &cond, SEQ_FILLED);
        let cond = super::pcie_study::scaling_lab(&opts, 1, 80)?.into_rows();
        rows = merge(rows, &cond, ONE_HOST_CORE);
    }
    add("PCIe study", rows);

    let scale = if a.quick { Scale::small() } else { Scale::paper() };
    let cfg = TimedConfig::default();
    let mut rows = nicfs_rows(&cfg, &scale, a.seed)?;
    if !a.no_conditions {
        let mut slow = cfg.clone();
        slow.nic.switch_ns = 15_000;
        let cond = nicfs_rows(&slow, &scale, a.seed)?;
        rows = merge(rows, &cond, SLOW_SWITCH);
    }
    add("NICFS", rows);
    Ok(entries)
}

/// A NICFS comparison judged by the rules of the others where the paper gives a number
/// ("1.51", "1.10-1.21" by its middle, "2 (x2)"), or a bound ("<= 0.5", ">= 2": `Yes` inside,
/// else the direction `nicfs figure` tests); where it gives only words ("well below 1"), the
/// direction `nicfs figure` tests is the whole claim: `Yes` or `No`.
fn nicfs_verdict(ratio: f64, published: &str, same_direction: bool) -> Verdict {
    let number = |s: &str| s.trim().parse::<f64>().ok();
    let direction = if same_direction { Verdict::Direction } else { Verdict::No };
    let words = Verdict::shape(same_direction);
    let p = published.trim();
    if let Some(x) = p.strip_prefix(">=").and_then(number) {
        return if ratio >= x { Verdict::Yes } else { direction };
    }
    if let Some(x) = p.strip_prefix("<=").and_then(number) {
        return if ratio <= x { Verdict::Yes } else { direction };
    }
    let first = p.split_whitespace().next().unwrap_or("");
    let value = number(first).or_else(|| {
        let (a, b) = first.split_once('-')?;
        Some((number(a)? + number(b)?) / 2.0)
    });
    value.map_or(words, |v| Verdict::ratio(ratio, v))
}

/// NICFS's comparisons (the timed model's figure rows).
fn nicfs_rows(cfg: &TimedConfig, scale: &Scale, seed: u64) -> Result<Vec<Row>> {
    eprintln!("nicfs: the paper's figures in the timed model");
    let (_, rows) = nicfs_timed::figures::paper(cfg, scale, seed).map_err(|e| anyhow!("nicfs: {e}"))?;
    Ok(rows
        .into_iter()
        .map(|r| Row {
            verdict: Some(nicfs_verdict(r.ratio, &r.published, r.same_direction)),
            figure: r.figure.into(),
            metric: r.measure,
            measured: format!("{:.2}", r.ratio),
            published: r.published,
            note: r.values,
        })
        .collect())
}

/// How far a verdict goes: no, direction, yes.
fn rank(v: Option<&Verdict>) -> u8 {
    match v {
        None | Some(Verdict::No) => 0,
        Some(Verdict::Direction) => 1,
        Some(Verdict::Yes) => 2,
        Some(Verdict::Under(_, v)) => rank(Some(v)),
    }
}

/// The default rows, each judged again with the conditioned run's verdict when that goes
/// further (`Under`); every judged row the condition ran says in its note what it gave, so a
/// condition that helps one comparison and breaks another shows both.
fn merge(default: Vec<Row>, cond: &[Row], condition: &str) -> Vec<Row> {
    default
        .into_iter()
        .map(|mut row| {
            let Some(c) = cond.iter().find(|c| c.figure == row.figure && c.metric == row.metric) else {
                return row;
            };
            let (d, k) = (rank(row.verdict.as_ref()), rank(c.verdict.as_ref()));
            if row.verdict.is_some() {
                let label = c.verdict.as_ref().map_or("-".into(), Verdict::label);
                row.note = format!("{}; with {condition}: {} ({label})", row.note, c.measured);
            }
            if k > d && row.verdict.is_some() {
                let v = c.verdict.clone().expect("a judged row");
                row.verdict = Some(Verdict::Under(condition.into(), Box::new(v)));
            }
            row
        })
        .collect()
}

/// A cell of the Markdown table: no `|` or line break inside.
fn cell(s: &str) -> String {
    s.replace('|', "/").replace('\n', " ")
}

/// The table, judged rows and shown-only rows alike (`-` in the verdict column).
pub fn markdown(entries: &[Entry]) -> String {
    let mut s = String::from("| paper | figure | comparison | published | ssdlab | reproduced | note |\n");
    s.push_str("|---|---|---|---|---|---|---|\n");
    for e in entries {
        let r = &e.row;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            e.paper,
            cell(&r.figure),
            cell(&r.metric),
            cell(&r.published),
            cell(&r.measured),
            r.verdict.as_ref().map_or("-".into(), |v| cell(&v.label())),
            cell(&r.note)
        );
    }
    s
}

/// The verdicts of a table [`markdown`] wrote, by (paper, figure, comparison).
fn verdicts(text: &str) -> BTreeMap<(String, String, String), String> {
    text.lines()
        .filter_map(|l| {
            let c: Vec<&str> = l.trim().strip_prefix('|')?.split('|').map(str::trim).collect();
            if c.len() < 7 || c[0] == "paper" || c[0].starts_with("---") {
                return None;
            }
            Some(((c[0].into(), c[1].into(), c[2].into()), c[5].into()))
        })
        .collect()
}

/// Every comparison whose verdict differs from `text`'s, or that only one of them has.
fn check(entries: &[Entry], text: &str) -> Vec<String> {
    let mut want = verdicts(text);
    let mut problems = Vec::new();
    for e in entries {
        let key = (e.paper.to_string(), cell(&e.row.figure), cell(&e.row.metric));
        let got = e.row.verdict.as_ref().map_or("-".into(), |v| cell(&v.label()));
        match want.remove(&key) {
            None => problems.push(format!("new: {} / {} / {} ({got})", key.0, key.1, key.2)),
            Some(w) if w != got => problems.push(format!("{} / {} / {}: {w} -> {got}", key.0, key.1, key.2)),
            Some(_) => {}
        }
    }
    problems.extend(want.into_keys().map(|(p, f, c)| format!("gone: {p} / {f} / {c}")));
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(figure: &str, metric: &str, v: Option<Verdict>) -> Row {
        Row {
            figure: figure.into(),
            metric: metric.into(),
            measured: "1".into(),
            published: "2".into(),
            note: "n".into(),
            verdict: v,
        }
    }

    #[test]
    fn a_condition_upgrades_a_verdict_and_notes_every_change() {
        let default = vec![
            row("f", "a", Some(Verdict::No)),
            row("f", "b", Some(Verdict::Yes)),
            row("f", "c", None),
            row("f", "d", Some(Verdict::Direction)),
        ];
        let cond = vec![
            row("f", "a", Some(Verdict::Yes)),
            row("f", "b", Some(Verdict::No)),
            row("f", "c", Some(Verdict::Yes)),
            row("f", "d", Some(Verdict::Direction)),
        ];
        let m = merge(default, &cond, "x");
        assert_eq!(m[0].verdict, Some(Verdict::Under("x".into(), Box::new(Verdict::Yes))));
        assert_eq!(m[0].verdict.as_ref().unwrap().label(), "yes with x");
        // A condition that breaks a reproduced comparison leaves it, and says so.
        assert_eq!(m[1].verdict, Some(Verdict::Yes));
        assert!(m[1].note.contains("with x: 1 (no)"), "{}", m[1].note);
        // A row that is not judged stays unjudged.
        assert_eq!(m[2].verdict, None);
        assert_eq!(m[3].verdict, Some(Verdict::Direction));
        assert_eq!(m[3].note, "n; with x: 1 (direction only)");
    }

    #[test]
    fn the_check_finds_changed_new_and_gone_comparisons() {
        let e = |metric: &str, v: Verdict| Entry { paper: "P", row: row("fig", metric, Some(v)) };
        let written = markdown(&[e("a", Verdict::Yes), e("b|c", Verdict::No), e("gone", Verdict::Yes)]);
        let now = [e("a", Verdict::Yes), e("b|c", Verdict::Direction), e("new", Verdict::No)];
        let p = check(&now, &written);
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p.iter().any(|s| s == "P / fig / b/c: no -> direction only"), "{p:?}");
        assert!(p.iter().any(|s| s.starts_with("new: P / fig / new")), "{p:?}");
        assert!(p.iter().any(|s| s == "gone: P / fig / gone"), "{p:?}");
        assert!(check(&now[..1], &markdown(&now[..1])).is_empty());
    }

    #[test]
    fn verdicts_follow_the_stated_rules() {
        assert_eq!(Verdict::change(0.30, 0.312), Verdict::Yes);
        assert_eq!(Verdict::change(0.10, 0.312), Verdict::Direction);
        assert_eq!(Verdict::change(0.70, 0.312), Verdict::Direction);
        assert_eq!(Verdict::change(-0.02, 0.33), Verdict::No);
        assert_eq!(Verdict::change(0.0, 0.33), Verdict::No);
        assert_eq!(Verdict::change(0.003, 0.312), Verdict::No);
        assert_eq!(Verdict::change(3.5, 0.312), Verdict::No);
        assert_eq!(Verdict::ratio(12.0, 100.0), Verdict::Direction);
        assert_eq!(Verdict::ratio(9.0, 100.0), Verdict::No);
        assert_eq!(Verdict::ratio(60.0, 100.0), Verdict::Yes);
        assert_eq!(Verdict::near(40_000.0, 75_000.0, 100_000.0), Verdict::Yes);
        assert_eq!(Verdict::near(359_000.0, 75_000.0, 100_000.0), Verdict::No);
        assert_eq!(Verdict::within(0.49, 0.5, 1.0), Verdict::No);
    }

    #[test]
    fn nicfs_published_values_are_read_as_numbers_bounds_or_words() {
        assert_eq!(nicfs_verdict(1.99, "2 (x2)", true), Verdict::Yes);
        assert_eq!(nicfs_verdict(3.62, "1.51", true), Verdict::Direction);
        assert_eq!(nicfs_verdict(0.82, "1.51", false), Verdict::No);
        assert_eq!(nicfs_verdict(1.2, "1.10-1.21", true), Verdict::Yes);
        assert_eq!(nicfs_verdict(2.15, ">= 2", true), Verdict::Yes);
        assert_eq!(nicfs_verdict(1.5, ">= 2", true), Verdict::Direction);
        assert_eq!(nicfs_verdict(0.4, "<= 0.5", true), Verdict::Yes);
        assert_eq!(nicfs_verdict(1.0, "<= 0.5", false), Verdict::No);
        assert_eq!(nicfs_verdict(1.9, "below the two-front-end value", true), Verdict::Yes);
        assert_eq!(nicfs_verdict(1.0, "well below 1", false), Verdict::No);
    }
}
