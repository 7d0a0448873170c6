//! Prints the default raw-bit-error model as Markdown tables for `docs/errors.md`: RBER and
//! expected bit errors per 512 B codeword against P/E cycles and retention, per cell type.
//!
//! ```text
//! cargo run -p ssdlab-nand --example error_table
//! ```

use nand::CellType;
use nand::errors::{
    ErrorModel, PageAge, ReadAttempt, codeword_failure_probability, expected_errors, rated_pe,
};
use sim::SimDuration;

const CW: u32 = 512 * 8;
const CORRECTABLE: u32 = 12;

fn main() {
    let retentions: [(&str, u64); 5] =
        [("0", 0), ("1 day", 1), ("1 week", 7), ("1 month", 30), ("1 year", 365)];
    for cell in [CellType::Slc, CellType::Mlc, CellType::Tlc, CellType::Qlc] {
        let m = ErrorModel::defaults(cell);
        let rated = rated_pe(cell);
        println!("### {} (rated {} P/E cycles)\n", cell.to_string().to_uppercase(), rated);
        println!(
            "Page-average RBER / expected errors per 512 B codeword / worst page's P(> {CORRECTABLE} errors), first read, no read disturb:\n"
        );
        print!("| P/E cycles |");
        for (name, _) in retentions {
            print!(" t = {name} |");
        }
        println!();
        println!("|---|{}", "---|".repeat(retentions.len()));
        for n in [0, rated / 10, rated / 2, rated, 2 * rated] {
            print!("| {n} |");
            for (_, days) in retentions {
                let age = PageAge {
                    pe_cycles: n,
                    retention: SimDuration::from_secs(days * 86_400),
                    reads_since_erase: 0,
                };
                let types = cell.page_types();
                let rbers: Vec<f64> = types.iter().map(|&p| m.rber(p, &age, ReadAttempt::First)).collect();
                let mean = rbers.iter().sum::<f64>() / rbers.len() as f64;
                let worst = rbers.iter().copied().fold(0.0, f64::max);
                let fail = codeword_failure_probability(worst, CW, CORRECTABLE);
                print!(" {:.1e} / {:.3} / {:.0e} |", mean, expected_errors(mean, CW), fail);
            }
            println!();
        }
        println!();
    }
    let m = ErrorModel::defaults(CellType::Tlc);
    println!("### TLC read disturb and retry, at 3000 P/E cycles, MSB page\n");
    println!(
        "| reads since erase | retention | RBER first read | after retry step 0 | after step 3 | after last step |"
    );
    println!("|---|---|---|---|---|---|");
    let last = m.retry().steps.len() - 1;
    for (reads, days) in [(0, 0), (10_000, 0), (100_000, 0), (0, 365), (100_000, 365)] {
        let age = PageAge {
            pe_cycles: 3_000,
            retention: SimDuration::from_secs(days * 86_400),
            reads_since_erase: reads,
        };
        let r = |a| m.rber(nand::PageType::Msb, &age, a);
        println!(
            "| {reads} | {days} d | {:.2e} | {:.2e} | {:.2e} | {:.2e} |",
            r(ReadAttempt::First),
            r(ReadAttempt::Retry(0)),
            r(ReadAttempt::Retry(3)),
            r(ReadAttempt::Retry(last))
        );
    }
}
