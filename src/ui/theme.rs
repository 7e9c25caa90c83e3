//! The frame's colours, apart from the screen so that views drawing themselves need not
//! import the screen (and, through it, the whole UI state).

use ratatui::style::{Color, Modifier, Style};

/// Colours, or none at all when NO_COLOR is set (reverse video still marks the selection).
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub(crate) color: bool,
}

impl Theme {
    pub(crate) fn fg(self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    pub(crate) fn title(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn dim(self) -> Style {
        self.fg(Color::DarkGray)
    }

    /// Pipeline events in the delta panel: relists, watch starts, bookmarks.
    pub(crate) fn warn(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn spark(self) -> Style {
        self.fg(Color::Green)
    }

    pub(crate) fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// A row's colour by its health; standard ANSI colours, which dark and light terminal
    /// themes both map to readable shades.
    pub(crate) fn health(self, health: kscope_index_views::columns::RowHealth) -> Style {
        use kscope_index_views::columns::RowHealth;
        match health {
            RowHealth::Normal => Style::default(),
            RowHealth::Failing => self.fg(Color::Red),
            RowHealth::Pending => self.fg(Color::Yellow),
            RowHealth::Terminating => self.fg(Color::Magenta),
            RowHealth::Completed => self.dim(),
            // Bold as well, so that a Warning stands out under NO_COLOR too.
            RowHealth::Warning => self.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        }
    }

    /// Rows that are not current: dimmed, with colour or without.
    pub(crate) fn stale(self) -> Style {
        self.dim().add_modifier(Modifier::DIM)
    }

    /// A row marked for a write.
    pub(crate) fn marked(self) -> Style {
        self.fg(Color::Cyan)
            .add_modifier(Modifier::BOLD | Modifier::ITALIC)
    }

    pub(crate) fn selected(self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}
