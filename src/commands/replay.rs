//! `kscope replay FILE --print`: the store a recording's kinds held at its end, or at a
//! time or resourceVersion, read from the nearest keyframe before it. A damaged file is read
//! up to the damage, printed, and reported (exit code 1).

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use kscope_informers::fifo::FifoKind;
use kscope_informers::record::format::{BlockType, Reader, Record, RecordError};
use kscope_informers::record::state::State;
use kscope_units::duration::parse_duration;

use super::CommandError;
use super::output::{OutputFormat, list_of, write_object};

/// Play a recording made by `kscope record` in the TUI, or print its store (--print).
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// The recording.
    pub file: PathBuf,
    /// With --print: the kind to print, as recorded (`pods`); default: every recorded kind.
    pub kind: Option<String>,
    /// Print the store instead of opening the TUI.
    #[arg(long)]
    pub print: bool,
    /// Run the recording through each of these FIFOs (classic, real, atomic) into an Indexer,
    /// compare what they hand a controller, and check each store against the recording's at
    /// every keyframe and at the end.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "LIST",
        conflicts_with = "print"
    )]
    pub fifo: Vec<FifoKind>,
    /// With --fifo: how long (on the recording's clock) the controller is busy between pops
    /// of everything queued; 0s pops after every record.
    #[arg(long, value_parser = parse_duration, default_value = "100ms", value_name = "DURATION")]
    pub pop_every: Duration,
    /// With --fifo: the differences shown per pair of FIFOs (all are counted).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub differences: usize,
    /// The point to print the store at (or the TUI to start at): an RFC 3339 time, or a
    /// resourceVersion (the state just after the event that carried it). Default: the end of
    /// the recording (the TUI: its start).
    #[arg(long, value_name = "TIME|RV")]
    pub at: Option<String>,
    /// With --print: json, yaml or name.
    #[arg(short = 'o', long, value_enum, default_value = "name")]
    pub output: OutputFormat,
    /// In the TUI: how much faster than recorded it plays (0.1 to 100; `<` and `>` change it).
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "X",
        conflicts_with = "print"
    )]
    pub speed: f64,
}

/// Where to stop reading.
#[derive(Debug, Clone, Copy)]
enum At {
    /// Microseconds since the epoch.
    Time(i64),
    ResourceVersion(u64),
}

impl At {
    fn parse(text: &str) -> Result<Self, CommandError> {
        if let Ok(rv) = text.parse::<u64>() {
            return Ok(Self::ResourceVersion(rv));
        }
        text.parse::<jiff::Timestamp>()
            .map(|t| Self::Time(t.as_microsecond()))
            .map_err(|e| {
                CommandError::Usage(format!(
                    "--at {text:?}: neither a resourceVersion nor an RFC 3339 time ({e})"
                ))
            })
    }

    /// Whether `record` comes after the point.
    fn passed_by(self, record: &Record) -> bool {
        match self {
            Self::Time(t) => record.at() > t,
            Self::ResourceVersion(rv) => record
                .resource_version()
                .and_then(|r| r.parse::<u64>().ok())
                .is_some_and(|r| r > rv),
        }
    }
}

pub async fn run(args: &ReplayArgs, out: &mut impl Write) -> Result<(), CommandError> {
    if !args.print {
        return Err(CommandError::Usage(
            "kscope replay reads a recording headless with --print or --fifo; without them, it opens the TUI"
                .into(),
        ));
    }
    if !matches!(
        args.output,
        OutputFormat::Json | OutputFormat::Yaml | OutputFormat::Name
    ) {
        return Err(CommandError::Usage(
            "kscope replay --print prints -o json, yaml or name".into(),
        ));
    }
    let at = args.at.as_deref().map(At::parse).transpose()?;
    let (state, damage) = read(args, at)?;
    if let Some(kind) = &args.kind
        && !state.kinds.contains_key(kind)
    {
        return Err(CommandError::Usage(format!(
            "{kind} is not in the recording (it has {})",
            state.kinds.keys().cloned().collect::<Vec<_>>().join(", ")
        )));
    }
    let mut items = Vec::new();
    for (kind, store) in &state.kinds {
        if args.kind.as_ref().is_some_and(|k| k != kind) {
            continue;
        }
        for object in store.objects.values() {
            let value: Value = serde_json::from_str(object.get()).map_err(std::io::Error::other)?;
            items.push((kind.as_str(), value));
        }
    }
    match args.output {
        OutputFormat::Name => {
            for (kind, value) in &items {
                let kind = value
                    .get("kind")
                    .and_then(Value::as_str)
                    .map_or_else(|| kind.to_string(), str::to_lowercase);
                let name = value
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                writeln!(out, "{kind}/{name}")?;
            }
        }
        format => {
            let list = list_of(items.into_iter().map(|(_, v)| v).collect());
            write_object(out, &list, format)?;
        }
    }
    out.flush()?;
    match damage {
        Some(damage) => {
            eprintln!("kscope: warning: {damage}");
            Err(damage.into())
        }
        None => Ok(()),
    }
}

/// Folds the recording up to `at`, starting from the last keyframe before it. Returns the
/// state and the damage that stopped the read early, if any.
fn read(args: &ReplayArgs, at: Option<At>) -> Result<(State, Option<RecordError>), CommandError> {
    let mut reader = Reader::new(BufReader::new(File::open(&args.file)?))?;
    let (blocks, index_damage) = reader.index()?;
    let start = at.and_then(|at| {
        blocks
            .iter()
            .filter(|b| b.block_type == BlockType::Keyframe)
            .take_while(|b| match at {
                At::Time(t) => b.first_at <= t,
                At::ResourceVersion(rv) => b.max_rv <= rv,
            })
            .last()
    });
    if let Some(keyframe) = start {
        reader.seek_block(keyframe.offset)?;
    }
    let mut state = State::default();
    loop {
        let block = match reader.next_block() {
            Ok(Some((_, records))) => records,
            Ok(None) => return Ok((state, index_damage)),
            Err(e @ RecordError::Damaged { .. }) => return Ok((state, Some(e))),
            Err(e) => return Err(e.into()),
        };
        for record in &block {
            if at.is_some_and(|at| at.passed_by(record)) {
                return Ok((state, None));
            }
            state.apply(record);
        }
    }
}
