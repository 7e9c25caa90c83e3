//! The terminal's lifecycle, in one place: raw mode and the alternate screen on entry; the
//! terminal restored on quit, on error (the guard's drop) and on panic (ratatui's hook, which
//! restores before the previous hook prints the panic).

use std::io;

use ratatui::DefaultTerminal;

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

    /// Runs `session` on the normal screen, raw mode kept so that every key goes to it as
    /// typed, then comes back to the alternate screen and redraws all of it. The caller
    /// drops its event reader first: that reader's thread would take the session's keys.
    pub async fn hand_over<F: Future>(&mut self, session: F) -> io::Result<F::Output> {
        crossterm::execute!(
            io::stdout(),
            crossterm::terminal::LeaveAlternateScreen,
            crossterm::cursor::Show
        )?;
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

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        ratatui::restore();
    }
}
