//! The arguments the object commands (tree, timeline, hotloops) read alike.

use super::error::CommandError;

/// `-o` of a command that prints a table or JSON (tree, timeline, hotloops): whether JSON.
pub fn table_or_json(output: Option<&str>, command: &str) -> Result<bool, CommandError> {
    match output {
        None | Some("wide") => Ok(false),
        Some("json") => Ok(true),
        Some(other) => Err(CommandError::Usage(format!(
            "-o {other}: {command} prints a table or json"
        ))),
    }
}

/// `KIND/NAME` as a command names one object; `example` is shown when it is not that.
pub fn kind_and_name<'a>(
    object: &'a str,
    example: &str,
) -> Result<(&'a str, &'a str), CommandError> {
    object.split_once('/').ok_or_else(|| {
        CommandError::Usage(format!(
            "{object}: name the object as KIND/NAME, e.g. {example}"
        ))
    })
}
