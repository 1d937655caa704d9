//! Reading PDN: the games of a file, with their tags and move text.
//!
//! ```
//! use frisian_tb::pdn;
//! let text = "[GameType \"40\"]\n[FEN \"W:WK18,15:BK46\"]\n[Result \"1-1\"]\n1. 15-10 46-37 1-1\n";
//! let games = pdn::parse_games(text);
//! let game = games[0].as_ref().unwrap();
//! assert_eq!(game.tag("FEN"), Some("W:WK18,15:BK46"));
//! assert_eq!(game.moves.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(), ["15-10", "46-37"]);
//! assert_eq!(game.result.as_deref(), Some("1-1"));
//! ```
//!
//! A file is split into games first (a tag line after move text starts a new
//! game), so one unreadable game is reported by its number and line and the
//! others are still read. Move text may hold move numbers (`1.`, `1...`),
//! comments (`{...}`, `;` to the end of the line), variations (`(...)`, skipped),
//! NAGs (`$1`), move marks (`!`, `?`) and escape lines (`%`); moves are returned as written, for
//! the caller to match against the legal moves.

/// A move as written in the move text, with the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PdnMove {
    /// The move text without marks, e.g. `28x19` or `28x19x10`.
    pub text: String,
    /// Line number (1-based) in the file.
    pub line: usize,
}

/// One game of a PDN file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PdnGame {
    /// Number of the game in the file, from 1.
    pub number: usize,
    /// Line on which the game starts.
    pub line: usize,
    /// Tags in order: name and value.
    pub tags: Vec<(String, String)>,
    /// The main line's moves.
    pub moves: Vec<PdnMove>,
    /// The result token ending the move text (`2-0`, `0-2`, `1-1`, `*`...), if any.
    pub result: Option<String>,
}

impl PdnGame {
    /// The value of a tag (names compare without regard to case).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A game that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("game {game} (line {line}): {message}")]
pub struct PdnError {
    /// Number of the game in the file, from 1.
    pub game: usize,
    /// Line of the problem.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Result tokens of draughts PDN (and the chess forms some programs write).
const RESULTS: [&str; 8] = ["2-0", "0-2", "1-1", "0-0", "1-0", "0-1", "1/2-1/2", "*"];

/// Every game of a PDN text, each read or with the reason it could not be.
pub fn parse_games(text: &str) -> Vec<Result<PdnGame, PdnError>> {
    split_games(text)
        .into_iter()
        .enumerate()
        .map(|(i, (line, lines))| parse_game(i + 1, line, &lines))
        .collect()
}

/// Lines of each game, with the number of its first line. A tag line after
/// move text (or after a result) starts a new game.
fn split_games(text: &str) -> Vec<(usize, Vec<(usize, &str)>)> {
    let mut games: Vec<(usize, Vec<(usize, &str)>)> = Vec::new();
    let mut in_moves = false;
    let mut in_comment = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_start_matches('\u{feff}');
        let trimmed = line.trim();
        let starts_tag = !in_comment && trimmed.starts_with('[');
        if games.is_empty() || (starts_tag && in_moves) {
            if trimmed.is_empty() {
                continue;
            }
            games.push((i + 1, Vec::new()));
            in_moves = false;
        }
        let comment_line = trimmed.starts_with([';', '%']);
        if !trimmed.is_empty() && !starts_tag && !in_comment && !comment_line {
            in_moves = true;
        }
        // Track comments spanning lines, so that a '[' inside one does not start a game.
        for c in line.chars() {
            match c {
                '{' => in_comment = true,
                '}' => in_comment = false,
                _ => {}
            }
        }
        games.last_mut().unwrap().1.push((i + 1, line));
    }
    games
}

fn parse_game(number: usize, first: usize, lines: &[(usize, &str)]) -> Result<PdnGame, PdnError> {
    let err = |line: usize, message: String| PdnError {
        game: number,
        line,
        message,
    };
    let mut tags = Vec::new();
    let mut first = first;
    let mut k = 0;
    // Tag section.
    while k < lines.len() {
        let (n, line) = lines[k];
        let t = line.trim();
        // Blank lines, and comment and escape lines between tags.
        if t.is_empty() || t.starts_with([';', '%']) {
            k += 1;
            continue;
        }
        if !t.starts_with('[') {
            break;
        }
        if tags.is_empty() {
            first = n; // the game starts at its first tag, after any comment lines
        }
        let inner = t
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .ok_or_else(|| err(n, format!("tag line not closed by ']': {t}")))?;
        let (name, rest) = inner
            .trim()
            .split_once(char::is_whitespace)
            .ok_or_else(|| err(n, format!("tag without a value: {t}")))?;
        let value = rest
            .trim()
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .ok_or_else(|| err(n, format!("tag value not in double quotes: {t}")))?;
        tags.push((name.to_string(), value.replace("\\\"", "\"")));
        k += 1;
    }
    // Move text.
    let mut moves = Vec::new();
    let mut result = None;
    let mut depth = 0usize; // variation nesting
    let mut comment_from: Option<usize> = None;
    for &(n, line) in &lines[k..] {
        if comment_from.is_none() && line.trim_start().starts_with('%') {
            continue; // an escape line
        }
        let mut token = String::new();
        let flush = |token: &mut String,
                     moves: &mut Vec<PdnMove>,
                     result: &mut Option<String>,
                     depth: usize|
         -> Result<(), PdnError> {
            let t = std::mem::take(token);
            if t.is_empty() || depth > 0 {
                return Ok(());
            }
            if result.is_some() {
                return Err(err(
                    n,
                    format!("'{t}' after the result {}", result.as_ref().unwrap()),
                ));
            }
            if RESULTS.contains(&t.as_str()) {
                *result = Some(t);
                return Ok(());
            }
            if t.starts_with('$') {
                return Ok(()); // a NAG
            }
            // Move numbers: "12." or "12..." (possibly glued to the move: "12.32-28").
            let body = t.trim_start_matches(|c: char| c.is_ascii_digit());
            let body = if body.len() < t.len() && body.starts_with('.') {
                body.trim_start_matches('.')
            } else {
                t.as_str()
            };
            let body = body.trim_end_matches(['!', '?']);
            if body.is_empty() {
                return Ok(());
            }
            let is_move = body
                .split(['-', 'x', 'X', ':'])
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
                && body.contains(['-', 'x', 'X', ':']);
            if !is_move {
                return Err(err(n, format!("'{t}' is neither a move nor a move number")));
            }
            moves.push(PdnMove {
                text: body.to_string(),
                line: n,
            });
            Ok(())
        };
        for c in line.chars() {
            if comment_from.is_some() {
                if c == '}' {
                    comment_from = None;
                }
                continue;
            }
            match c {
                '{' => {
                    flush(&mut token, &mut moves, &mut result, depth)?;
                    comment_from = Some(n);
                }
                ';' => {
                    flush(&mut token, &mut moves, &mut result, depth)?;
                    break; // comment to the end of the line
                }
                '(' => {
                    flush(&mut token, &mut moves, &mut result, depth)?;
                    depth += 1;
                }
                ')' => {
                    flush(&mut token, &mut moves, &mut result, depth)?;
                    if depth == 0 {
                        return Err(err(n, "')' without a variation to close".into()));
                    }
                    depth -= 1;
                }
                c if c.is_whitespace() => flush(&mut token, &mut moves, &mut result, depth)?,
                c => token.push(c),
            }
        }
        flush(&mut token, &mut moves, &mut result, depth)?;
    }
    if let Some(n) = comment_from {
        return Err(err(n, "comment '{' not closed".into()));
    }
    if depth > 0 {
        return Err(err(first, "variation '(' not closed".into()));
    }
    Ok(PdnGame {
        number,
        line: first,
        tags,
        moves,
        result,
    })
}

/// The moves of a move text such as `1. 32-28 18-23 2. 28x19`, with move
/// numbers, comments and marks removed (for `--solution` and `--play`).
pub fn move_text(text: &str) -> Result<Vec<String>, PdnError> {
    let game = parse_game(
        1,
        1,
        &text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l))
            .collect::<Vec<_>>(),
    )?;
    Ok(game.moves.into_iter().map(|m| m.text).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_tags_moves_and_results() {
        let text = "[Event \"One\"]\n[FEN \"W:W28:B19\"]\n\n1. 28x13 {the only capture} 2-0\n\n\
                    [Event \"Two\"]\n[Result \"1-1\"]\n1.32-28! (1. 33-29 ?) 19-23 $2 2... 28x19 ; done\n1-1\n";
        let games = parse_games(text);
        assert_eq!(games.len(), 2);
        let one = games[0].as_ref().unwrap();
        assert_eq!((one.number, one.line), (1, 1));
        assert_eq!(one.tag("event"), Some("One"));
        assert_eq!(one.moves[0].text, "28x13");
        assert_eq!(one.result.as_deref(), Some("2-0"));
        let two = games[1].as_ref().unwrap();
        assert_eq!((two.number, two.line), (2, 6));
        let moves: Vec<&str> = two.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(moves, ["32-28", "19-23", "28x19"]);
        assert_eq!(two.moves[2].line, 8);
        assert_eq!(two.result.as_deref(), Some("1-1"));
    }

    #[test]
    fn a_broken_game_is_reported_and_the_others_read() {
        let text = "[Event \"A\"]\n1. 32-28 *\n\n[Event \"B\"\n1. 32-28 *\n\n[Event \"C\"]\n1. 32-28 hello *\n\n[Event \"D\"]\n1. 32-28 {open\n";
        let games = parse_games(text);
        assert_eq!(games.len(), 4);
        assert!(games[0].is_ok());
        let b = games[1].as_ref().unwrap_err();
        assert_eq!((b.game, b.line), (2, 4));
        assert!(b.message.contains("not closed"), "{b}");
        let c = games[2].as_ref().unwrap_err();
        assert_eq!((c.game, c.line), (3, 8));
        assert!(c.message.contains("hello"), "{c}");
        let d = games[3].as_ref().unwrap_err();
        assert!(d.message.contains("comment"), "{d}");
    }

    #[test]
    fn move_text_drops_numbers_and_marks() {
        assert_eq!(
            move_text("1. 32-28!? 18-23 2.28x19 14x23").unwrap(),
            ["32-28", "18-23", "28x19", "14x23"]
        );
        assert!(move_text("1. 32-28 foo").is_err());
    }
}
