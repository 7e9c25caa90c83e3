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
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        ratatui::restore();
    }
}
