use std::fs::File;
use std::io::{self, BufWriter, Write};

struct Row {
    name: String,
    size: u64,
    modified: u64,
}

fn write_row(out: &mut impl Write, name: &str, size: u64, modified: u64) -> io::Result<()> {
    writeln!(out, "{:<30} {:>12} {:>12}", name, size, modified)
}

fn write_report(path: &str, rows: &[Row]) -> io::Result<usize> {
    let mut out = BufWriter::new(File::create(path)?);
    writeln!(out, "{:<30} {:>12} {:>12}", "name", "bytes", "modified")?;
    for row in rows {
        write_row(
            &mut out,
            &row.name
            row.size,
            row.modified,
        )?;
    }
    out.flush()?;
    Ok(rows.len())
}

fn main() -> io::Result<()> {
    let rows = vec![Row { name: "Cargo.toml".into(), size: 512, modified: 1_700_000_000 }];
    let count = write_report("report.txt", &rows)?;
    println!("wrote {} rows", count);
    Ok(())
}
