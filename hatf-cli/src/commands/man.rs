//! `hatf man`: the manual page in roff, generated from the command-line definitions.

use crate::args::{Cli, ManArgs};
use crate::error::{CliError, CliResult};
use crate::io::{create_output, Content};
use clap::CommandFactory;

/// Runs `hatf man`.
pub fn run(args: &ManArgs) -> CliResult {
    let command = Cli::command();
    let Some(dir) = &args.dir else {
        let mut page = Vec::new();
        render(command, &mut page)?;
        let text = String::from_utf8(page)
            .map_err(|e| CliError::input(format!("the manual page is not UTF-8: {e}")))?;
        return crate::data_stdout::print(&text);
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::input(format!("{}: cannot create: {e}", dir.display())))?;
    let mut pages = vec![("hatf".to_string(), command.clone())];
    for sub in command.get_subcommands() {
        pages.push((format!("hatf-{}", sub.get_name()), sub.clone()));
    }
    for (name, page_command) in pages {
        let mut page = Vec::new();
        // clap keeps names as `&'static str`; a few short names for a process about to end.
        let title: &'static str = Box::leak(name.clone().into_boxed_str());
        render(page_command.name(title), &mut page)?;
        let path = dir.join(format!("{name}.1"));
        let mut out = create_output(Some(&path), true, Content::Text)?;
        out.writer()
            .write_all(&page)
            .map_err(|e| CliError::input(format!("{}: cannot write: {e}", path.display())))?;
        out.commit()?;
    }
    Ok(())
}

fn render(command: clap::Command, page: &mut Vec<u8>) -> CliResult {
    clap_mangen::Man::new(command)
        .render(page)
        .map_err(|e| CliError::input(format!("cannot render the manual page: {e}")))
}
