//! The command line: `bridge-fixture-server [--many-tools N] [--close-stdout]`.
//!
//! A small hand-written parser, because the texts of the errors are part of what the tests of
//! the bridge read (`<option> needs a number, not '<text>'`), and because the later HTTPS mode
//! (`--https PORT`, `--oauth` and its sub-options, `--browse`) adds options that depend on each
//! other. Arguments that are not valid exit with code 2 and the cause on stderr.

/// The version of the fixture, also its `serverInfo.version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The text of `--help`, also written after an argument error.
pub const USAGE: &str = "\
usage: bridge-fixture-server [--many-tools N] [--close-stdout]
       bridge-fixture-server --help | --version

An MCP server of revision 2026-07-28 on stdio, for the tests of mcp-bridge-vscode.

options:
  --many-tools N   add the tools tool_0 .. tool_<N-1> (N from 0 to 10000)
  --close-stdout   close stdout at once and keep running for 120 s without reading stdin
                   (a server that misbehaves)
  --help           show this text
  --version        show the version
";

/// The largest value of `--many-tools`: enough for many pages, small enough for one frame.
pub const MAX_MANY_TOOLS: u32 = 10_000;

/// The settings of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The number of generated tools `tool_<i>`.
    pub many_tools: u32,
    /// Close stdout at once and stop reading: a misbehaving server.
    pub close_stdout: bool,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Serve(Options),
    Help,
    Version,
}

/// Parses the arguments (without the program name). The error is the cause, for stderr.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let mut options = Options::default();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        match name {
            "--help" | "-h" => return Ok(Command::Help),
            "--version" | "-V" => return Ok(Command::Version),
            "--close-stdout" => {
                if inline.is_some() {
                    return Err(format!("the option {name} takes no value"));
                }
                options.close_stdout = true;
            }
            "--many-tools" => {
                let value = match inline {
                    Some(value) => value,
                    None => iter
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("the option {name} needs a value"))?,
                };
                options.many_tools = number(name, &value, MAX_MANY_TOOLS)?;
            }
            _ => return Err(format!("the option {arg} is not known")),
        }
    }
    Ok(Command::Serve(options))
}

fn number(option: &str, text: &str, max: u32) -> Result<u32, String> {
    let value: u32 = text
        .parse()
        .map_err(|_| format!("{option} needs a number, not '{text}'"))?;
    if value > max {
        return Err(format!(
            "{option} needs a number from 0 to {max}, not '{text}'"
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_the_options() {
        assert_eq!(parse(&args(&[])), Ok(Command::Serve(Options::default())));
        assert_eq!(
            parse(&args(&["--many-tools", "30", "--close-stdout"])),
            Ok(Command::Serve(Options {
                many_tools: 30,
                close_stdout: true
            }))
        );
        assert_eq!(
            parse(&args(&["--many-tools=7"])),
            Ok(Command::Serve(Options {
                many_tools: 7,
                close_stdout: false
            }))
        );
        assert_eq!(
            parse(&args(&["--many-tools", "1", "--help"])),
            Ok(Command::Help)
        );
        assert_eq!(parse(&args(&["--version"])), Ok(Command::Version));
    }

    #[test]
    fn refuses_arguments_that_are_not_valid() {
        assert_eq!(
            parse(&args(&["--many-tools", "x1"])),
            Err("--many-tools needs a number, not 'x1'".into())
        );
        assert_eq!(
            parse(&args(&["--many-tools"])),
            Err("the option --many-tools needs a value".into())
        );
        assert_eq!(
            parse(&args(&["--many-tools", "10001"])),
            Err("--many-tools needs a number from 0 to 10000, not '10001'".into())
        );
        assert_eq!(
            parse(&args(&["--bogus"])),
            Err("the option --bogus is not known".into())
        );
        assert_eq!(
            parse(&args(&["--close-stdout=1"])),
            Err("the option --close-stdout takes no value".into())
        );
    }
}
