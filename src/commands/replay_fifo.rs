//! `kscope replay FILE --fifo classic,real,atomic`: the recording run through each FIFO into
//! an Indexer, as a controller would pop it (`kscope_informers::record::pipelines`). Prints
//! what each pipeline handed, where they differ, and whether each store matched the
//! recording's at every keyframe and at the end; a store that did not is an error naming the
//! keyframe.

use std::fs::File;
use std::io::{BufReader, Write};

use kscope_informers::record::format::{Reader, RecordError};
use kscope_informers::record::pipelines::{
    CheckPoint, PipelineOptions, PipelineReplay, PipelineReport, StoreCheck,
};

use super::CommandError;
use super::output::OutputFormat;
use super::replay::ReplayArgs;

pub async fn run(args: &ReplayArgs, out: &mut impl Write) -> Result<(), CommandError> {
    if !matches!(args.output, OutputFormat::Json | OutputFormat::Name) {
        return Err(CommandError::Usage(
            "kscope replay --fifo prints a summary, or -o json".into(),
        ));
    }
    if args.at.is_some() || args.kind.is_some() {
        return Err(CommandError::Usage(
            "kscope replay --fifo runs the whole recording, every kind: no --at, no KIND".into(),
        ));
    }
    let mut replay = PipelineReplay::new(PipelineOptions {
        fifos: args.fifo.clone(),
        pop_every: args.pop_every,
        differences_shown: args.differences,
    })?;
    let mut reader = Reader::new(BufReader::new(File::open(&args.file)?))?;
    let damage = loop {
        match reader.next_block() {
            Ok(Some((_, records))) => {
                for record in &records {
                    replay.apply(record).await?;
                }
            }
            Ok(None) => break None,
            Err(e @ RecordError::Damaged { .. }) => break Some(e),
            Err(e) => return Err(e.into()),
        }
    };
    let report = replay.finish().await;
    match args.output {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &report).map_err(std::io::Error::other)?;
            writeln!(out)?;
        }
        _ => summarize(&report, out)?,
    }
    out.flush()?;
    if let Some(damage) = damage {
        eprintln!("kscope: warning: {damage}");
        return Err(damage.into());
    }
    match report.first_mismatch() {
        Some(check) => Err(CommandError::StoreMismatch(mismatch(check))),
        None => Ok(()),
    }
}

fn point(point: &CheckPoint) -> String {
    match point {
        CheckPoint::Keyframe {
            index,
            at,
            resource_version,
        } => {
            let time = jiff::Timestamp::from_microsecond(*at)
                .map_or_else(|_| format!("{at}µs"), |t| t.to_string());
            format!("keyframe {index} (resourceVersion {resource_version}, {time})")
        }
        CheckPoint::End => "the end of the recording".into(),
    }
}

fn mismatch(check: &StoreCheck) -> String {
    format!(
        "at {}, the {} pipeline's {} store differs from the recorded one: {}",
        point(&check.point),
        check.fifo,
        check.kind,
        check.mismatched.join(", ")
    )
}

fn summarize(report: &PipelineReport, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "{} records replayed", report.records)?;
    for s in &report.fifos {
        let per_pop = if s.pops == 0 {
            0.0
        } else {
            s.deltas as f64 / s.pops as f64
        };
        writeln!(
            out,
            "{} {}: {} pops, {} items, {} deltas ({per_pop:.2} per pop, at most {}); {} items merged {} deltas; {} ReplacedAll, {} SyncAll, {} bookmarks{}",
            s.kind,
            s.fifo,
            s.pops,
            s.items,
            s.deltas,
            s.max_deltas_per_pop,
            s.merged_items,
            s.merged_deltas,
            s.replaced_all,
            s.sync_all,
            s.bookmarks,
            if s.unreadable > 0 {
                format!("; {} unreadable objects left out", s.unreadable)
            } else {
                String::new()
            }
        )?;
    }
    for pair in &report.pairs {
        let counts: Vec<String> = pair
            .counts
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        writeln!(
            out,
            "{} {} vs {}: {}",
            pair.kind,
            pair.first,
            pair.second,
            if counts.is_empty() {
                "hand the same things".to_string()
            } else {
                format!("differ: {}", counts.join(", "))
            }
        )?;
        for d in &pair.differences {
            writeln!(out, "  {} #{} {}: {}", d.fifo, d.seq, d.kind, d.message)?;
        }
    }
    for check in &report.checks {
        if check.identical {
            writeln!(
                out,
                "{}: {} {} store identical ({} objects)",
                point(&check.point),
                check.kind,
                check.fifo,
                check.objects
            )?;
        } else {
            writeln!(out, "{}", mismatch(check))?;
        }
    }
    Ok(())
}
