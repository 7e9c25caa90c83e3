//! The terminal's lifecycle, in one place: raw mode and the alternate screen on entry; the
//! terminal restored on quit, on error (the guard's drop) and on panic (ratatui's hook, which
//! restores before the previous hook prints the panic).

use std::io::{self, Write};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use ratatui::DefaultTerminal;

/// How a program the terminal is handed to takes the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// Raw: every key goes as typed, Ctrl-C included (a shell in a pod, whose own terminal
    /// is remote).
    Raw,
    /// The terminal as a shell leaves it: a local program (the editor) sets the mode it
    /// needs and restores it on exit.
    Cooked,
}

/// The terminal in TUI mode; restored when dropped, however the TUI ends.
pub struct TerminalGuard {
    terminal: DefaultTerminal,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<Self> {
        let terminal = ratatui::try_init().inspect_err(|_| ratatui::restore())?;
        Ok(Self { terminal })
    }

    pub fn terminal(&mut self) -> &mut DefaultTerminal {
        &mut self.terminal
    }

    /// Runs `session` on the normal screen in `keys` mode, then comes back to the alternate
    /// screen, in raw mode again, and redraws all of it. The caller drops its event reader
    /// first: that reader's thread would take the session's keys.
    pub async fn hand_over<F: Future>(&mut self, keys: Keys, session: F) -> io::Result<F::Output> {
        crossterm::execute!(
            io::stdout(),
            crossterm::terminal::LeaveAlternateScreen,
            crossterm::cursor::Show
        )?;
        if keys == Keys::Cooked {
            crossterm::terminal::disable_raw_mode()?;
        }
        let output = session.await;
        crossterm::execute!(
            io::stdout(),
            crossterm::terminal::EnterAlternateScreen,
            crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
        )?;
        crossterm::terminal::enable_raw_mode()?;
        // A new terminal has no previous frame, so the next draws all of it. Not `clear()`:
        // it asks the terminal where the cursor is, and that answer can be lost on the way
        // back from a session.
        self.terminal =
            ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(io::stdout()))?;
        Ok(output)
    }
}

/// Ends kscope when its terminal hangs up (the window closed, tmux's server killed).
/// crossterm's reader spins on a hung-up terminal without returning (its read loop ends on
/// neither end-of-file nor EIO), so the loop that would see an error or the SIGHUP never runs
/// again; a thread that only waits for the hang-up ends the process instead, with the status
/// SIGHUP gives (128 + 1). There is nothing left to restore: the terminal is gone.
pub fn exit_on_hangup() -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags, poll};
    use std::io::IsTerminal;
    if !io::stdin().is_terminal() {
        // crossterm reads /dev/tty then; stdin's state says nothing about it.
        return Ok(());
    }
    std::thread::Builder::new()
        .name("hangup".to_string())
        .spawn(move || {
            let stdin = rustix::stdio::stdin();
            loop {
                // No events asked: poll reports only a hang-up or an error, and reads nothing.
                let mut fds = [PollFd::new(&stdin, PollFlags::empty())];
                match poll(&mut fds, None) {
                    Ok(_) if fds[0].revents().intersects(PollFlags::HUP | PollFlags::ERR) => {
                        tracing::warn!("the terminal hung up: kscope exits");
                        std::process::exit(129);
                    }
                    Ok(_) if fds[0].revents().contains(PollFlags::NVAL) => return,
                    Ok(_) | Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => return,
                }
            }
        })?;
    Ok(())
}

/// The OSC 52 sequence that sets the clipboard to `text`: the terminal (and tmux, and an
/// SSH session's terminal at the far end) does the copy, so it works where no local
/// clipboard tool does.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", STANDARD.encode(text))
}

/// Copies `text` to the clipboard through the terminal kscope draws on.
pub fn copy_to_clipboard(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(osc52(text).as_bytes())?;
    out.flush()
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_carries_the_text_in_base64() {
        assert_eq!(osc52("web-1"), "\x1b]52;c;d2ViLTE=\x07");
    }
}
