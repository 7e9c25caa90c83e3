//! The filter query language, shared by the TUI's filter bar and `kscope get --filter`.
//!
//! ```text
//! app=web                 one index value: a hash lookup
//! app=web,node=n1         AND: intersect the key sets, smallest first
//! app in (a,b)            union of values;  app notin (a,b)  its complement
//! app!=web   !app         complement against the store (!app: objects with no app value)
//! web-7f                  free text: namespace/name or a cell as shown contains it
//! -f wfr                  fuzzy text: wfr's letters in order in namespace/name
//! !crash                  inverted text (when no index is called crash: else `!index`)
//! ~^web-\d+$              a regex on namespace/name and the cells, to the end of the line
//! ```
//! Terms are separated by commas or spaces; `==` is the same as `=`.

use std::fmt;

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

use kscope_informers::indexer::{Indexer, IndexerError, KeySet};
use kscope_informers::keys::Key;
use kscope_informers::object::Object;

use super::fuzzy::TextPattern;

/// One index term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    Eq {
        index: String,
        value: String,
    },
    Ne {
        index: String,
        value: String,
    },
    In {
        index: String,
        values: Vec<String>,
    },
    NotIn {
        index: String,
        values: Vec<String>,
    },
    /// `!index`: objects without any value for the index.
    Missing {
        index: String,
    },
}

impl Term {
    pub fn index(&self) -> &str {
        match self {
            Self::Eq { index, .. }
            | Self::Ne { index, .. }
            | Self::In { index, .. }
            | Self::NotIn { index, .. }
            | Self::Missing { index } => index,
        }
    }

    /// The values a term tests and whether it negates them; `None` for `!index`.
    fn values(&self) -> Option<(&[String], bool)> {
        match self {
            Self::Eq { value, .. } => Some((std::slice::from_ref(value), false)),
            Self::In { values, .. } => Some((values, false)),
            Self::Ne { value, .. } => Some((std::slice::from_ref(value), true)),
            Self::NotIn { values, .. } => Some((values, true)),
            Self::Missing { .. } => None,
        }
    }

    /// Whether the term selects from its own sets (`=`, `in`), rather than excluding from
    /// the whole store.
    fn is_positive(&self) -> bool {
        matches!(self, Self::Eq { .. } | Self::In { .. })
    }
}

/// The term as the query language writes it (`app=web`, `app in (a,b)`, `!app`).
impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Eq { index, value } => write!(f, "{index}={value}"),
            Self::Ne { index, value } => write!(f, "{index}!={value}"),
            Self::In { index, values } => write!(f, "{index} in ({})", values.join(",")),
            Self::NotIn { index, values } => write!(f, "{index} notin ({})", values.join(",")),
            Self::Missing { index } => write!(f, "!{index}"),
        }
    }
}

/// The query as it would be typed: its terms, comma-separated, then its text.
impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for term in &self.terms {
            if !first {
                f.write_str(",")?;
            }
            write!(f, "{term}")?;
            first = false;
        }
        for (i, term) in self.labels.iter().enumerate() {
            match (i, first) {
                (0, true) => f.write_str("-l ")?,
                (0, false) => f.write_str(" -l ")?,
                _ => f.write_str(",")?,
            }
            write!(f, "{term}")?;
            first = false;
        }
        if !self.text.is_empty() {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(&self.text)?;
        }
        Ok(())
    }
}

/// The index a query names clusters by, across a fleet (`cluster=prod-eu,app=web`).
pub const CLUSTER_INDEX: &str = "cluster";

/// The `cluster` terms of a query. No store indexes them: across a fleet each cluster has a
/// store of its own, so the fleet's map of stores by cluster is the cluster index, and a
/// term picks stores (a lookup per cluster) before any row is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterFilter {
    terms: Vec<Term>,
}

impl ClusterFilter {
    /// Whether the rows of `cluster` may be selected at all. `!cluster` admits none, as
    /// every row of a fleet has its cluster.
    pub fn admits(&self, cluster: &str) -> bool {
        self.terms.iter().all(|term| match term.values() {
            Some((values, negated)) => values.iter().any(|v| v == cluster) != negated,
            None => false,
        })
    }
}

/// A parsed query: index terms (ANDed), label selector terms and free text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pub terms: Vec<Term>,
    /// k9s's `-l app=web,tier!=db`: terms on labels, whether or not an index reads them
    /// (each term's `index` is the label key). Tested object by object, after the index
    /// terms chose the candidates.
    pub labels: Vec<Term>,
    /// Free text, fuzzy-matched against `namespace/name`; empty when none.
    pub text: String,
}

/// A query that does not parse: what was expected, and where (1-based column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct ParseError {
    pub column: usize,
    pub message: String,
}

/// A query that cannot run on this store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("unknown index {name:?}; indexes: {known}")]
    UnknownIndex { name: String, known: String },
    /// `-l` terms have no index to select keys by: only a live view, which reads each
    /// object, takes them.
    #[error("a label selector (-l {selector}) filters the TUI's tables only; use kubectl's -l")]
    LabelSelector { selector: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token<'a> {
    Word(&'a str),
    Eq,
    Ne,
    Not,
    Open,
    Close,
    Comma,
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Word(w) => write!(f, "{w:?}"),
            Self::Eq => write!(f, "'='"),
            Self::Ne => write!(f, "'!='"),
            Self::Not => write!(f, "'!'"),
            Self::Open => write!(f, "'('"),
            Self::Close => write!(f, "')'"),
            Self::Comma => write!(f, "','"),
        }
    }
}

/// Tokens with their 1-based columns.
fn tokenize(input: &str) -> Vec<(usize, Token<'_>)> {
    let mut tokens = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        let column = input[..i].chars().count() + 1;
        let single = |t| (column, t);
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            ',' => {
                chars.next();
                tokens.push(single(Token::Comma));
            }
            '(' => {
                chars.next();
                tokens.push(single(Token::Open));
            }
            ')' => {
                chars.next();
                tokens.push(single(Token::Close));
            }
            '=' => {
                chars.next();
                if chars.peek().is_some_and(|&(_, c)| c == '=') {
                    chars.next();
                }
                tokens.push(single(Token::Eq));
            }
            '!' => {
                chars.next();
                if chars.peek().is_some_and(|&(_, c)| c == '=') {
                    chars.next();
                    tokens.push(single(Token::Ne));
                } else {
                    tokens.push(single(Token::Not));
                }
            }
            _ => {
                let start = i;
                let mut end = input.len();
                while let Some(&(j, c)) = chars.peek() {
                    if c.is_whitespace() || ",()=!".contains(c) {
                        end = j;
                        break;
                    }
                    chars.next();
                }
                tokens.push((column, Token::Word(&input[start..end])));
            }
        }
    }
    tokens
}

struct Parser<'a> {
    tokens: Vec<(usize, Token<'a>)>,
    pos: usize,
    end_column: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Token<'a>> {
        self.tokens.get(self.pos).map(|(_, t)| t)
    }

    fn peek_at(&self, offset: usize) -> Option<&Token<'a>> {
        self.tokens.get(self.pos + offset).map(|(_, t)| t)
    }

    /// The rest of `input` from the current token when it starts a regex, `~re` or `!~re`.
    fn regex_start<'i>(&self, input: &'i str) -> Option<&'i str> {
        let at = match (self.peek(), self.peek_at(1)) {
            (Some(Token::Word(w)), _) if w.starts_with('~') => self.column(),
            (Some(Token::Not), Some(Token::Word(w))) if w.starts_with('~') => self.column(),
            _ => return None,
        };
        let byte = input.char_indices().nth(at - 1).map(|(i, _)| i)?;
        input.get(byte..)
    }

    fn column(&self) -> usize {
        self.tokens
            .get(self.pos)
            .map_or(self.end_column, |(c, _)| *c)
    }

    fn error(&self, expected: &str) -> ParseError {
        let found = match self.peek() {
            Some(token) => format!("found {token}"),
            None => "the query ended".to_string(),
        };
        ParseError {
            column: self.column(),
            message: format!("expected {expected}, {found}"),
        }
    }

    fn word(&mut self, expected: &str) -> Result<&'a str, ParseError> {
        match self.peek() {
            Some(Token::Word(w)) => {
                let w = *w;
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.error(expected)),
        }
    }

    fn values(&mut self) -> Result<Vec<String>, ParseError> {
        if self.peek() != Some(&Token::Open) {
            return Err(self.error("'(' to start the value list"));
        }
        self.pos += 1;
        let mut values = vec![self.word("a value")?.to_string()];
        loop {
            match self.peek() {
                Some(Token::Comma) => {
                    self.pos += 1;
                    values.push(self.word("a value after ','")?.to_string());
                }
                Some(Token::Close) => {
                    self.pos += 1;
                    return Ok(values);
                }
                _ => return Err(self.error("',' or ')' in the value list")),
            }
        }
    }
}

impl Query {
    pub fn parse(input: &str) -> Result<Self, ParseError> {
        let mut parser = Parser {
            tokens: tokenize(input),
            pos: 0,
            end_column: input.chars().count() + 1,
        };
        let mut query = Query::default();
        let mut text = Vec::new();
        let mut labels = false;
        while let Some(token) = parser.peek().cloned() {
            // `~re` and `!~re` run to the end of the line: a regex has its own commas,
            // parentheses and `!`.
            if let Some(regex) = parser.regex_start(input) {
                if !text.is_empty() {
                    return Err(ParseError {
                        column: parser.column(),
                        message: "a regular expression (~re) takes the place of other text"
                            .to_string(),
                    });
                }
                let regex = regex.trim_end();
                TextPattern::parse(regex).map_err(|e| ParseError {
                    column: parser.column(),
                    message: e.to_string(),
                })?;
                query.text = regex.to_string();
                return Ok(query);
            }
            match token {
                Token::Comma => parser.pos += 1,
                // The terms after `-l` select by label, as kubectl's and k9s's `-l`.
                Token::Word("-l") => {
                    parser.pos += 1;
                    labels = true;
                }
                // A `!` still alone (the first key of k9s's inverted filter) narrows nothing.
                Token::Not if parser.peek_at(1).is_none() => {
                    parser.pos += 1;
                    text.push("!");
                }
                Token::Not => {
                    parser.pos += 1;
                    let index = parser.word("an index name after '!'")?.to_string();
                    query.push(labels, Term::Missing { index });
                }
                Token::Word(word) => match parser.peek_at(1) {
                    Some(Token::Eq) | Some(Token::Ne) => {
                        let negated = parser.peek_at(1) == Some(&Token::Ne);
                        parser.pos += 2;
                        let value = parser.word("a value")?.to_string();
                        let index = word.to_string();
                        query.push(
                            labels,
                            if negated {
                                Term::Ne { index, value }
                            } else {
                                Term::Eq { index, value }
                            },
                        );
                    }
                    Some(Token::Word(op @ ("in" | "notin"))) => {
                        let negated = *op == "notin";
                        parser.pos += 2;
                        let values = parser.values()?;
                        let index = word.to_string();
                        query.push(
                            labels,
                            if negated {
                                Term::NotIn { index, values }
                            } else {
                                Term::In { index, values }
                            },
                        );
                    }
                    _ => {
                        parser.pos += 1;
                        text.push(word);
                    }
                },
                _ => {
                    return Err(parser.error("an index term (app=web) or text"));
                }
            }
        }
        query.text = text.join(" ");
        Ok(query)
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.labels.is_empty() && self.text.is_empty()
    }

    fn push(&mut self, label: bool, term: Term) {
        if label {
            self.labels.push(term);
        } else {
            self.terms.push(term);
        }
    }

    /// Takes out the terms on [`CLUSTER_INDEX`]: what picks a fleet's stores, and the
    /// query each picked store then answers.
    pub fn split_clusters(mut self) -> (ClusterFilter, Query) {
        let (clusters, rest): (Vec<Term>, Vec<Term>) = self
            .terms
            .into_iter()
            .partition(|t| t.index() == CLUSTER_INDEX);
        self.terms = rest;
        (ClusterFilter { terms: clusters }, self)
    }

    /// The query without its free text: what a view's members are chosen by.
    pub fn selector(&self) -> Query {
        Query {
            terms: self.terms.clone(),
            labels: self.labels.clone(),
            text: String::new(),
        }
    }

    /// k9s's inverted filter, `!crash`, is written like `!index` (objects without a value
    /// for the index): a lone `!name` that names none of the indexes `is_index` knows is
    /// inverted free text instead.
    pub fn resolve_inverted(mut self, is_index: impl Fn(&str) -> bool) -> Self {
        let unknown: Vec<usize> = self
            .terms
            .iter()
            .enumerate()
            .filter(|(_, t)| matches!(t, Term::Missing { index } if !is_index(index)))
            .map(|(i, _)| i)
            .collect();
        if let ([at], true) = (unknown.as_slice(), self.text.is_empty()) {
            let term = self.terms.remove(*at);
            self.text = format!("!{}", term.index());
        }
        self
    }

    /// The keys the index terms select (all keys when there are none), before free text.
    /// Positive terms intersect their sets smallest first; negative ones then filter.
    pub fn select<T: Object>(&self, indexer: &Indexer<T>) -> Result<Vec<Key>, QueryError> {
        if !self.labels.is_empty() {
            let terms: Vec<String> = self.labels.iter().map(Term::to_string).collect();
            return Err(QueryError::LabelSelector {
                selector: terms.join(","),
            });
        }
        let unknown = |name: &str| {
            let mut known: Vec<String> = indexer
                .index_names()
                .iter()
                .map(|n| n.to_string())
                .collect();
            known.sort();
            QueryError::UnknownIndex {
                name: name.to_string(),
                known: known.join(", "),
            }
        };
        let mut positive: Vec<(usize, &Term)> = Vec::new();
        for term in self.terms.iter().filter(|t| t.is_positive()) {
            let size = term_size(indexer, term).map_err(|_| unknown(term.index()))?;
            positive.push((size, term));
        }
        positive.sort_by_key(|(size, _)| *size);
        let mut keys: Vec<Key> = match positive.split_first() {
            Some(((_, first), rest)) => {
                let mut keys = term_keys(indexer, first).map_err(|_| unknown(first.index()))?;
                for (_, term) in rest {
                    keys =
                        retain_matching(indexer, term, keys).map_err(|_| unknown(term.index()))?;
                }
                keys
            }
            None => indexer.list_keys(),
        };
        for term in self.terms.iter().filter(|t| !t.is_positive()) {
            keys = retain_matching(indexer, term, keys).map_err(|_| unknown(term.index()))?;
        }
        Ok(keys)
    }
}

/// An upper bound of how many keys a positive term selects.
fn term_size<T: Object>(indexer: &Indexer<T>, term: &Term) -> Result<usize, IndexerError> {
    let size =
        |value: &str| indexer.with_index_set(term.index(), value, |s| s.map_or(0, KeySet::len));
    match term {
        Term::Eq { value, .. } => size(value),
        Term::In { values, .. } => values.iter().map(|v| size(v)).sum(),
        _ => Ok(usize::MAX),
    }
}

/// The keys of a positive term.
fn term_keys<T: Object>(indexer: &Indexer<T>, term: &Term) -> Result<Vec<Key>, IndexerError> {
    match term {
        Term::Eq { index, value } => indexer.index_keys(index, value),
        Term::In { index, values } => indexer.with_index(index, |idx| {
            let mut keys: Vec<Key> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for set in values.iter().filter_map(|v| idx.get(v.as_str())) {
                keys.extend(set.iter().filter(|k| seen.insert(*k)).cloned());
            }
            keys
        }),
        _ => Ok(indexer.list_keys()),
    }
}

/// Keeps the keys that satisfy `term`.
fn retain_matching<T: Object>(
    indexer: &Indexer<T>,
    term: &Term,
    mut keys: Vec<Key>,
) -> Result<Vec<Key>, IndexerError> {
    indexer.with_index(term.index(), |idx| {
        match term.values() {
            Some((values, negated)) => keys.retain(|key| {
                // Index sets answer for the store's own key: a key listed before this lock
                // may be an object's earlier one (deleted and added again since).
                let found = idx.held(key).is_some_and(|held| {
                    values
                        .iter()
                        .any(|v| idx.get(v.as_str()).is_some_and(|s| s.contains(held)))
                });
                found != negated
            }),
            None => {
                let with_value: std::collections::HashSet<&Key, foldhash::fast::RandomState> =
                    idx.values().flatten().collect();
                keys.retain(|key| !with_value.contains(key));
            }
        }
        keys
    })
}

/// Fuzzy matching of free text against keys (`namespace/name`), best matches first.
pub struct FuzzyFilter {
    matcher: SkimMatcherV2,
}

impl Default for FuzzyFilter {
    fn default() -> Self {
        Self {
            matcher: SkimMatcherV2::default().ignore_case(),
        }
    }
}

impl FuzzyFilter {
    /// The keys that match `text`, with their scores. Empty text keeps everything (score 0).
    pub fn filter(&self, text: &str, keys: impl IntoIterator<Item = Key>) -> Vec<(Key, i64)> {
        if text.is_empty() {
            return keys.into_iter().map(|k| (k, 0)).collect();
        }
        keys.into_iter()
            .filter_map(|k| {
                let score = self.matcher.fuzzy_match(&k, text)?;
                Some((k, score))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use smallvec::smallvec;

    use super::*;

    #[test]
    fn cluster_terms_pick_stores_and_leave_the_rest() {
        let query = Query::parse("cluster=prod-eu,app=web").unwrap();
        let (clusters, rest) = query.split_clusters();
        assert!(clusters.admits("prod-eu") && !clusters.admits("prod-us"));
        assert_eq!(rest.to_string(), "app=web");
        let (clusters, rest) = Query::parse("cluster notin (a,b) x")
            .unwrap()
            .split_clusters();
        assert!(!clusters.admits("a") && clusters.admits("c"));
        assert_eq!((rest.terms.len(), rest.text.as_str()), (0, "x"));
        let (clusters, _) = Query::parse("cluster in (a,b),cluster!=b")
            .unwrap()
            .split_clusters();
        assert!(clusters.admits("a") && !clusters.admits("b"));
        let (clusters, _) = Query::default().split_clusters();
        assert!(clusters.admits("any"), "no term admits every cluster");
    }
    use kscope_informers::indexer::{IndexerWriter, index_func};
    use kscope_informers::testing::{TestObj, obj};

    fn eq(index: &str, value: &str) -> Term {
        Term::Eq {
            index: index.into(),
            value: value.into(),
        }
    }

    #[test]
    fn a_query_prints_as_it_parses() {
        let typed = "app=web, node==n1 tier!=db team in (a, b) x notin (c) !owner web-7f";
        let query = Query::parse(typed).unwrap();
        let printed = query.to_string();
        assert_eq!(
            printed,
            "app=web,node=n1,tier!=db,team in (a,b),x notin (c),!owner web-7f"
        );
        assert_eq!(Query::parse(&printed).unwrap(), query);
        assert_eq!(Query::default().to_string(), "");
        assert_eq!(Query::parse("nginx").unwrap().to_string(), "nginx");
    }

    #[test]
    fn parses_every_form() {
        let q = Query::parse("app=web, node==n1 tier!=db team in (a, b) x notin (c) !owner web-7f")
            .unwrap();
        assert_eq!(
            q.terms,
            [
                eq("app", "web"),
                eq("node", "n1"),
                Term::Ne {
                    index: "tier".into(),
                    value: "db".into()
                },
                Term::In {
                    index: "team".into(),
                    values: vec!["a".into(), "b".into()]
                },
                Term::NotIn {
                    index: "x".into(),
                    values: vec!["c".into()]
                },
                Term::Missing {
                    index: "owner".into()
                },
            ]
        );
        assert_eq!(q.text, "web-7f");
        let owner = Query::parse("owner=ReplicaSet/web-abc image=nginx:1.25").unwrap();
        assert_eq!(owner.terms[0], eq("owner", "ReplicaSet/web-abc"));
        assert_eq!(owner.terms[1], eq("image", "nginx:1.25"));
        let text = Query::parse("checkout api").unwrap();
        assert!(text.terms.is_empty());
        assert_eq!(text.text, "checkout api");
        assert!(Query::parse("  ").unwrap().is_empty());
    }

    #[test]
    fn parse_errors_say_what_and_where() {
        let err = |q: &str| Query::parse(q).unwrap_err().to_string();
        assert_eq!(err("app="), "column 5: expected a value, the query ended");
        assert_eq!(err("app=,x"), "column 5: expected a value, found ','");
        assert_eq!(
            err("app in a"),
            "column 8: expected '(' to start the value list, found \"a\""
        );
        assert_eq!(
            err("app in (a b)"),
            "column 11: expected ',' or ')' in the value list, found \"b\""
        );
        assert_eq!(
            err("app in (a,"),
            "column 11: expected a value after ',', the query ended"
        );
        assert_eq!(
            err("!,"),
            "column 2: expected an index name after '!', found ','"
        );
        assert_eq!(
            err("~("),
            "column 1: regular expression \"(\": regex parse error:\n    (\n    ^\nerror: unclosed group"
        );
        assert_eq!(
            err("web ~x"),
            "column 5: a regular expression (~re) takes the place of other text"
        );
        assert_eq!(
            err("=web"),
            "column 1: expected an index term (app=web) or text, found '='"
        );
        assert_eq!(
            err("app=web )"),
            "column 9: expected an index term (app=web) or text, found ')'"
        );
    }

    fn store() -> Indexer<TestObj> {
        let label = index_func(|o: &TestObj| {
            Ok(if o.label.is_empty() {
                smallvec![]
            } else {
                smallvec![Cow::Borrowed(o.label.as_str())]
            })
        });
        let ns = index_func(|o: &TestObj| {
            Ok(o.namespace
                .as_deref()
                .map(Cow::Borrowed)
                .into_iter()
                .collect())
        });
        let indexer = IndexerWriter::new([("app", label), ("namespace", ns)]).unwrap();
        for (key, app) in [
            ("a/web-1", "web"),
            ("a/web-2", "web"),
            ("a/db-1", "db"),
            ("b/web-3", "web"),
            ("b/cache-1", "cache"),
            ("b/job-1", ""),
        ] {
            indexer.add(obj(key, 1, app)).unwrap();
        }
        indexer.reader()
    }

    fn run(query: &str) -> Vec<String> {
        let indexer = store();
        let q = Query::parse(query).unwrap();
        let keys = q.select(&indexer).unwrap();
        let mut out: Vec<String> = FuzzyFilter::default()
            .filter(&q.text, keys)
            .into_iter()
            .map(|(k, _)| k.to_string())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn selects_like_label_selectors() {
        assert_eq!(run("app=web"), ["a/web-1", "a/web-2", "b/web-3"]);
        assert_eq!(run("app=web,namespace=b"), ["b/web-3"]);
        assert_eq!(run("app in (db,cache)"), ["a/db-1", "b/cache-1"]);
        assert_eq!(run("app!=web"), ["a/db-1", "b/cache-1", "b/job-1"]);
        assert_eq!(
            run("app notin (web,db) namespace=b"),
            ["b/cache-1", "b/job-1"]
        );
        assert_eq!(run("!app"), ["b/job-1"]);
        assert_eq!(run("app=nope"), Vec::<String>::new());
        assert_eq!(run("app=web w2"), ["a/web-2"]);
        assert_eq!(run("cache"), ["b/cache-1"]);
        assert_eq!(run("").len(), 6);
    }

    #[test]
    fn bang_text_and_regexes_parse_as_k9s_filters() {
        let known = |name: &str| ["app", "namespace"].contains(&name);
        let q = Query::parse("!crash").unwrap().resolve_inverted(known);
        assert!(q.terms.is_empty());
        assert_eq!(q.text, "!crash");
        let q = Query::parse("!app").unwrap().resolve_inverted(known);
        assert_eq!(q.text, "");
        assert_eq!(q.terms.len(), 1, "!index keeps its meaning");
        assert_eq!(Query::parse("!").unwrap().text, "!");
        let q = Query::parse("app=web ~^a/(web|db)-[0-9],x$").unwrap();
        assert_eq!(q.terms, [eq("app", "web")]);
        assert_eq!(q.text, "~^a/(web|db)-[0-9],x$");
        assert_eq!(Query::parse("!~^web").unwrap().text, "!~^web");
        let q = Query::parse("-l app=web,tier!=db api").unwrap();
        assert!(q.terms.is_empty());
        assert_eq!(
            q.labels,
            [
                eq("app", "web"),
                Term::Ne {
                    index: "tier".into(),
                    value: "db".into()
                }
            ]
        );
        assert_eq!(q.text, "api");
        assert_eq!(q.to_string(), "-l app=web,tier!=db api");
        let both = Query::parse("node=n1 -l !tier").unwrap();
        assert_eq!(both.to_string(), "node=n1 -l !tier");
        assert_eq!(Query::parse(&both.to_string()).unwrap(), both);
    }

    #[test]
    fn unknown_index_names_the_known_ones() {
        let err = Query::parse("team=x")
            .unwrap()
            .select(&store())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown index \"team\"; indexes: app, namespace"
        );
        assert!(Query::parse("!team").unwrap().select(&store()).is_err());
    }
}
