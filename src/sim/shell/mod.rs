//! The small shell every simulated container runs for exec and attach: enough of `sh` for
//! `kubectl exec` (a command, `sh -c`, an interactive session with or without a TTY) and for
//! `kubectl cp` (tar over exec), over the container's in-memory filesystem.

pub(crate) mod fs;
mod tar;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub(crate) use fs::{Fs, Seed};

/// Output of a command, on the stream it was written to.
#[derive(Debug)]
pub(crate) enum Output {
    Stdout(Bytes),
    Stderr(Bytes),
}

/// What the shell knows of the container it runs in.
pub(crate) struct Container {
    pub(crate) pod: String,
    /// `NAME=value`, in the order `env` prints them.
    pub(crate) env: Vec<(String, String)>,
    /// PID 1's command line, for `ps`.
    pub(crate) main: String,
    pub(crate) fs: Arc<Mutex<Fs>>,
}

/// The streams of one exec: stdin (absent, or closed at the client's end), stdout and
/// stderr, and whether a TTY joins them (echo, line editing, `\r\n` line ends).
pub(crate) struct Io {
    pub(crate) stdin: Option<mpsc::UnboundedReceiver<Bytes>>,
    pub(crate) out: mpsc::Sender<Output>,
    pub(crate) tty: bool,
    /// Read from stdin but not yet consumed.
    pending: Vec<u8>,
}

impl Io {
    pub(crate) fn new(
        stdin: Option<mpsc::UnboundedReceiver<Bytes>>,
        out: mpsc::Sender<Output>,
        tty: bool,
    ) -> Self {
        Self {
            stdin,
            out,
            tty,
            pending: Vec::new(),
        }
    }

    /// The next bytes of stdin, `None` at its end.
    async fn read(&mut self) -> Option<Vec<u8>> {
        if !self.pending.is_empty() {
            return Some(std::mem::take(&mut self.pending));
        }
        let chunk = self.stdin.as_mut()?.recv().await;
        if chunk.is_none() {
            self.stdin = None;
        }
        chunk.map(|b| b.to_vec())
    }

    /// All of stdin up to its end.
    async fn read_all(&mut self) -> Vec<u8> {
        let mut all = Vec::new();
        while let Some(chunk) = self.read().await {
            all.extend_from_slice(&chunk);
        }
        all
    }

    /// Writes to stdout; a TTY turns `\n` into `\r\n` as its line discipline does. Whether
    /// the client still reads is the connection's concern, not the command's.
    async fn stdout(&self, data: impl Into<Vec<u8>>) {
        let data = self.cooked(data.into());
        let _ = self.out.send(Output::Stdout(Bytes::from(data))).await;
    }

    /// Writes to stderr, which a TTY joins to stdout.
    async fn stderr(&self, data: impl Into<Vec<u8>>) {
        let data = self.cooked(data.into());
        let frame = if self.tty {
            Output::Stdout(Bytes::from(data))
        } else {
            Output::Stderr(Bytes::from(data))
        };
        let _ = self.out.send(frame).await;
    }

    fn cooked(&self, data: Vec<u8>) -> Vec<u8> {
        if !self.tty {
            return data;
        }
        let mut out = Vec::with_capacity(data.len() + 8);
        for b in data {
            if b == b'\n' {
                out.push(b'\r');
            }
            out.push(b);
        }
        out
    }

    /// One line of stdin without its end; with a TTY, echoed and edited as typed
    /// (backspace, ctrl-C drops the line, ctrl-D on an empty line ends the input).
    async fn read_line(&mut self) -> Option<String> {
        let mut line: Vec<u8> = Vec::new();
        loop {
            let chunk = match self.read().await {
                Some(chunk) => chunk,
                None if line.is_empty() => return None,
                None => return Some(String::from_utf8_lossy(&line).into_owned()),
            };
            for (i, &b) in chunk.iter().enumerate() {
                let done = match b {
                    b'\r' | b'\n' => {
                        if self.tty {
                            self.stdout("\n").await;
                        }
                        true
                    }
                    0x7f | 0x08 if self.tty => {
                        if line.pop().is_some() {
                            self.stdout(b"\x08 \x08".to_vec()).await;
                        }
                        false
                    }
                    0x03 if self.tty => {
                        self.stdout("^C\n").await;
                        line.clear();
                        true
                    }
                    0x04 if self.tty && line.is_empty() => {
                        self.stdin = None;
                        return None;
                    }
                    b => {
                        line.push(b);
                        if self.tty {
                            self.stdout(vec![b]).await;
                        }
                        false
                    }
                };
                if done {
                    let mut rest = &chunk[i + 1..];
                    // A TTY's Enter is `\r`; a `\n` right after it is the same line end.
                    if b == b'\r' {
                        rest = rest.strip_prefix(b"\n".as_slice()).unwrap_or(rest);
                    }
                    self.pending = rest.to_vec();
                    return Some(String::from_utf8_lossy(&line).into_owned());
                }
            }
        }
    }
}

/// Whether the shell goes on after a command, or ends with a status (`exit`).
enum Flow {
    Next(i32),
    Exit(i32),
}

/// A running shell: the container, its working directory and the last status.
pub(crate) struct Shell<'a> {
    container: &'a Container,
    io: &'a mut Io,
    cwd: String,
    status: i32,
    cancel: CancellationToken,
}

impl<'a> Shell<'a> {
    pub(crate) fn new(container: &'a Container, io: &'a mut Io, cancel: CancellationToken) -> Self {
        Self {
            container,
            io,
            cwd: "/".to_string(),
            status: 0,
            cancel,
        }
    }

    /// Runs `argv` as the container runtime execs it; the exit status.
    pub(crate) async fn exec(&mut self, argv: &[String]) -> i32 {
        match self.command(argv).await {
            Flow::Next(code) | Flow::Exit(code) => code,
        }
    }

    /// An interactive shell on stdin until `exit` or stdin's end; with a TTY, a prompt.
    async fn interactive(&mut self) -> Flow {
        loop {
            if self.io.tty {
                let prompt = format!("root@{}:{}# ", self.container.pod, self.cwd);
                self.io.stdout(prompt).await;
            }
            let Some(line) = self.io.read_line().await else {
                return Flow::Next(self.status);
            };
            if let Flow::Exit(code) = self.script(&line).await {
                return Flow::Exit(code);
            }
        }
    }

    /// Runs a script: lines and `;`, `&&`, `||` between commands.
    async fn script(&mut self, text: &str) -> Flow {
        for line in text.lines() {
            let Some(words) = split_words(line, &self.container.env) else {
                self.io
                    .stderr("sh: syntax error: unterminated quoted string\n")
                    .await;
                self.status = 2;
                continue;
            };
            let mut skip = false;
            for (command, then) in chain(words) {
                if !skip && !command.is_empty() {
                    let status = self.status.to_string();
                    let command: Vec<String> = command
                        .iter()
                        .map(|w| w.replace(LAST_STATUS, &status))
                        .collect();
                    match Box::pin(self.command(&command)).await {
                        Flow::Exit(code) => return Flow::Exit(code),
                        Flow::Next(code) => self.status = code,
                    }
                }
                skip = match then.as_deref() {
                    Some("&&") => self.status != 0,
                    Some("||") => self.status == 0,
                    _ => false,
                };
            }
        }
        Flow::Next(self.status)
    }

    async fn command(&mut self, argv: &[String]) -> Flow {
        let Some((name, args)) = argv.split_first() else {
            return Flow::Next(0);
        };
        let program = name.rsplit('/').next().unwrap_or(name);
        let code = match program {
            "sh" | "bash" | "ash" => return self.sh(args).await,
            "exit" => {
                let code = args.first().map_or(Some(self.status), |a| a.parse().ok());
                return match code {
                    Some(code) => Flow::Exit(code & 0xff),
                    None => {
                        self.io.stderr("sh: exit: Illegal number\n").await;
                        Flow::Exit(2)
                    }
                };
            }
            "echo" => self.echo(args).await,
            "env" | "printenv" => self.env().await,
            "ls" => self.ls(args).await,
            "cat" => self.cat(args).await,
            "ps" => self.ps().await,
            "sleep" => self.sleep(args).await,
            "tar" => self.tar(args).await,
            "test" | "[" => self.test(args),
            "pwd" => {
                self.io.stdout(format!("{}\n", self.cwd)).await;
                0
            }
            "cd" => self.cd(args).await,
            "hostname" => {
                self.io.stdout(format!("{}\n", self.container.pod)).await;
                0
            }
            "true" => 0,
            "false" => 1,
            _ => {
                self.io.stderr(format!("sh: {name}: not found\n")).await;
                127
            }
        };
        Flow::Next(code)
    }

    /// `sh -c SCRIPT`, or an interactive `sh` on stdin.
    async fn sh(&mut self, args: &[String]) -> Flow {
        match args {
            [flag, script, ..] if flag == "-c" => {
                let flow = self.script(script).await;
                Flow::Next(match flow {
                    Flow::Next(code) | Flow::Exit(code) => code,
                })
            }
            [flag] if flag == "-c" => {
                self.io.stderr("sh: -c requires an argument\n").await;
                Flow::Next(2)
            }
            _ => Flow::Next(match self.interactive().await {
                Flow::Next(code) | Flow::Exit(code) => code,
            }),
        }
    }

    async fn echo(&mut self, args: &[String]) -> i32 {
        let (newline, args) = match args.split_first() {
            Some((n, rest)) if n == "-n" => (false, rest),
            _ => (true, args),
        };
        let mut text = args.join(" ");
        if newline {
            text.push('\n');
        }
        self.io.stdout(text).await;
        0
    }

    async fn env(&mut self) -> i32 {
        let text: String = self
            .container
            .env
            .iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect();
        self.io.stdout(text).await;
        0
    }

    async fn ls(&mut self, args: &[String]) -> i32 {
        let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        let targets = if paths.is_empty() {
            vec![self.cwd.clone()]
        } else {
            paths.iter().map(|p| Fs::resolve(&self.cwd, p)).collect()
        };
        let mut code = 0;
        for (i, (path, given)) in targets
            .iter()
            .zip(
                paths
                    .iter()
                    .map(|p| p.as_str())
                    .chain(std::iter::repeat(".")),
            )
            .enumerate()
        {
            let listing = {
                let fs = self.container.fs.lock();
                match fs.get(path) {
                    None => None,
                    Some(fs::Node::File(_)) => Some(format!("{given}\n")),
                    Some(fs::Node::Dir) => {
                        let mut text = String::new();
                        if targets.len() > 1 {
                            text.push_str(&format!("{}{given}:\n", if i > 0 { "\n" } else { "" }));
                        }
                        for child in fs.children(path) {
                            text.push_str(child);
                            text.push('\n');
                        }
                        Some(text)
                    }
                }
            };
            match listing {
                Some(text) => self.io.stdout(text).await,
                None => {
                    self.io
                        .stderr(format!("ls: {given}: No such file or directory\n"))
                        .await;
                    code = 1;
                }
            }
        }
        code
    }

    async fn cat(&mut self, args: &[String]) -> i32 {
        if args.is_empty() || args.iter().all(|a| a == "-") {
            while let Some(chunk) = self.io.read().await {
                if self.io.tty {
                    // A TTY echoes what is typed; cat's own copy then follows.
                    self.io.stdout(chunk.clone()).await;
                }
                self.io.stdout(chunk).await;
            }
            return 0;
        }
        let mut code = 0;
        for arg in args {
            let path = Fs::resolve(&self.cwd, arg);
            let found = match self.container.fs.lock().get(&path) {
                Some(fs::Node::File(data)) => Ok(data.clone()),
                Some(fs::Node::Dir) => Err("Is a directory"),
                None => Err("No such file or directory"),
            };
            match found {
                Ok(data) => self.io.stdout(data).await,
                Err(why) => {
                    self.io
                        .stderr(format!("cat: can't open '{arg}': {why}\n"))
                        .await;
                    code = 1;
                }
            }
        }
        code
    }

    async fn ps(&mut self) -> i32 {
        let text = format!(
            "PID   USER     TIME  COMMAND\n    1 root      0:00 {}\n   {} root      0:00 ps\n",
            self.container.main,
            rand::random_range(7..400)
        );
        self.io.stdout(text).await;
        0
    }

    async fn sleep(&mut self, args: &[String]) -> i32 {
        let seconds = match args.first().map(|a| a.trim_end_matches('s').parse::<f64>()) {
            Some(Ok(s)) if s.is_finite() && s >= 0.0 => s,
            _ => {
                self.io.stderr("sleep: invalid number\n").await;
                return 1;
            }
        };
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs_f64(seconds.min(1.0e6))) => 0,
            () = self.cancel.cancelled() => 130,
        }
    }

    fn test(&mut self, args: &[String]) -> i32 {
        let args: Vec<&str> = args
            .iter()
            .map(String::as_str)
            .filter(|a| *a != "]")
            .collect();
        let fs = self.container.fs.lock();
        let holds = match args.as_slice() {
            ["-d", p] => fs.is_dir(&Fs::resolve(&self.cwd, p)),
            ["-e", p] => fs.get(&Fs::resolve(&self.cwd, p)).is_some(),
            ["-f", p] => matches!(fs.get(&Fs::resolve(&self.cwd, p)), Some(fs::Node::File(_))),
            ["-n", s] => !s.is_empty(),
            ["-z", s] => s.is_empty(),
            [a, "=", b] => a == b,
            [a, "!=", b] => a != b,
            [s] => !s.is_empty(),
            _ => false,
        };
        i32::from(!holds)
    }

    async fn cd(&mut self, args: &[String]) -> i32 {
        let target = Fs::resolve(&self.cwd, args.first().map_or("/root", String::as_str));
        if self.container.fs.lock().is_dir(&target) {
            self.cwd = target;
            0
        } else {
            let given = args.first().map_or("", String::as_str);
            self.io
                .stderr(format!(
                    "sh: cd: can't cd to {given}: No such file or directory\n"
                ))
                .await;
            2
        }
    }

    async fn tar(&mut self, args: &[String]) -> i32 {
        let request = match tar::Request::parse(args) {
            Ok(r) => r,
            Err(why) => {
                self.io.stderr(format!("tar: {why}\n")).await;
                return 1;
            }
        };
        match request.mode {
            tar::Mode::Create => {
                let made = tar::create(&self.container.fs.lock(), &self.cwd, &request);
                match made {
                    Ok(archive) => {
                        // An archive is binary: never through a TTY's line discipline.
                        let _ = self.io.out.send(Output::Stdout(archive.into())).await;
                        0
                    }
                    Err(why) => {
                        self.io.stderr(format!("tar: {why}\n")).await;
                        1
                    }
                }
            }
            tar::Mode::Extract => {
                let archive = self.io.read_all().await;
                let extracted =
                    tar::extract(&mut self.container.fs.lock(), &self.cwd, &request, &archive);
                match extracted {
                    Ok(()) => 0,
                    Err(why) => {
                        self.io.stderr(format!("tar: {why}\n")).await;
                        1
                    }
                }
            }
        }
    }
}

/// Stands for `$?` in a split line until its command runs: the status it expands to is the
/// one of the command before it on the line.
const LAST_STATUS: char = '\u{1}';

/// Splits a command line into words: whitespace separates, quotes group, `$NAME` expands
/// outside single quotes (and `$?` once its command runs); `;`, `&&` and `||` are words of their own. `None` for an
/// unterminated quote.
fn split_words(line: &str, env: &[(String, String)]) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (Some('"') | None, '$') => {
                let mut name = String::new();
                if chars.peek() == Some(&'?') {
                    chars.next();
                    word.push(LAST_STATUS);
                } else {
                    while let Some(&n) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_')
                    {
                        name.push(n);
                        chars.next();
                    }
                    if name.is_empty() {
                        word.push('$');
                    } else if let Some((_, v)) = env.iter().find(|(k, _)| *k == name) {
                        word.push_str(v);
                    }
                }
                in_word = true;
            }
            (None, ';') | (None, '&' | '|') if chars.peek() == Some(&c) || c == ';' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                if c == ';' {
                    words.push(";".to_string());
                } else {
                    chars.next();
                    words.push(format!("{c}{c}"));
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (_, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// Commands of a split line with the operator after each (`;`, `&&`, `||`, or none).
fn chain(words: Vec<String>) -> Vec<(Vec<String>, Option<String>)> {
    let mut out = Vec::new();
    let mut command = Vec::new();
    for word in words {
        if matches!(word.as_str(), ";" | "&&" | "||") {
            out.push((std::mem::take(&mut command), Some(word)));
        } else {
            command.push(word);
        }
    }
    out.push((command, None));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container() -> Container {
        Container {
            pod: "web-1".into(),
            env: vec![("GREETING".into(), "hello there".into())],
            main: "/app/web".into(),
            fs: Arc::new(Mutex::new(Fs::seeded(&Seed {
                hostname: "web-1",
                app: "web",
                image: "web:1",
                ports: &[8080],
            }))),
        }
    }

    /// Runs `argv` with `stdin` (closed after it); (status, stdout, stderr).
    async fn run(argv: &[&str], stdin: &[u8], tty: bool) -> (i32, String, String) {
        let container = container();
        let (in_tx, in_rx) = mpsc::unbounded_channel();
        let (out_tx, mut out_rx) = mpsc::channel(64);
        if !stdin.is_empty() {
            in_tx.send(Bytes::copy_from_slice(stdin)).unwrap();
        }
        drop(in_tx);
        let mut io = Io::new(Some(in_rx), out_tx, tty);
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let code = Shell::new(&container, &mut io, CancellationToken::new())
            .exec(&argv)
            .await;
        drop(io);
        let (mut out, mut err) = (String::new(), String::new());
        while let Some(o) = out_rx.recv().await {
            match o {
                Output::Stdout(b) => out.push_str(&String::from_utf8_lossy(&b)),
                Output::Stderr(b) => err.push_str(&String::from_utf8_lossy(&b)),
            }
        }
        (code, out, err)
    }

    #[tokio::test]
    async fn scripts_expand_quote_and_chain() {
        let (code, out, _) = run(
            &[
                "sh",
                "-c",
                "echo \"$GREETING\" 'x $GREETING'; false || echo $? && exit 4; echo no",
            ],
            b"",
            false,
        )
        .await;
        assert_eq!(out, "hello there x $GREETING\n1\n");
        assert_eq!(code, 4);
    }

    #[tokio::test]
    async fn an_unknown_command_is_127_on_stderr() {
        let (code, out, err) = run(&["frobnicate"], b"", false).await;
        assert_eq!((code, out.as_str()), (127, ""));
        assert_eq!(err, "sh: frobnicate: not found\n");
    }

    #[tokio::test]
    async fn a_tty_echoes_edits_and_ends_lines_with_crlf() {
        let (code, out, _) = run(&["sh"], b"echo hix\x7f\rexit 3\r", true).await;
        assert_eq!(code, 3);
        assert!(
            out.contains("echo hix\x08 \x08\r\nhi\r\nroot@web-1:/# exit 3"),
            "{out:?}"
        );
    }

    #[tokio::test]
    async fn files_are_read_and_listed() {
        let (code, out, _) = run(&["sh", "-c", "cat /etc/hostname; ls /etc"], b"", false).await;
        assert_eq!((code, out.as_str()), (0, "web-1\nhostname\nos-release\n"));
        let (code, _, err) = run(&["cat", "/nope"], b"", false).await;
        assert_eq!(code, 1);
        assert!(err.contains("No such file"), "{err}");
    }
}
