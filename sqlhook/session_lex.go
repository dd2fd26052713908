package sqlhook

import (
	"errors"
	"strings"

	"github.com/shardkey/shardkey/internal/sqltok"
)

// What the session layer must see in any statement, including those the
// routing core never parses (they name no logic table): the first
// keyword, user variables, function names, the words of SET and savepoint
// statements. internal/sqltok knows each dialect's quoting and comments,
// so nothing inside a string or a comment is taken for code, and MySQL's
// executable comments (/*! ... */, /*M! ... */) are read as the code they
// are.

type sessTokKind uint8

const (
	slWord    sessTokKind = iota + 1 // unquoted identifier or keyword; text lower-cased
	slQuoted                         // quoted identifier; text as written inside the quotes, a doubled quote read as one
	slString                         // string literal; text as written between the quotes (a dollar-quoted one: "")
	slNumber                         // numeric literal
	slParam                          // placeholder: ?, $1, :name, SQLite's @name
	slUserVar                        // MySQL @name, @'name', @`name`
	slSysVar                         // MySQL @@name, @@session.name (text: what follows @@, lower-cased)
	slOp                             // operator or punctuation; ":=" is one sessToken
)

type sessToken struct {
	kind sessTokKind
	text string
}

var errSessLex = errors.New("unterminated string, identifier or comment")

// sessLex splits q into tokens in dialect d, dropping comments and spaces
// (and an executable comment's markers: what it holds is read as code).
func sessLex(d Dialect, q string) ([]sessToken, error) {
	mode := sqltok.PostgreSQL
	switch d {
	case MySQL:
		mode = sqltok.MySQL
	case SQLite:
		mode = sqltok.SQLite
	}
	toks := make([]sessToken, 0, len(q)/4+4) // one allocation: about a token per four bytes
	l := sqltok.New(q, mode)
	for {
		t := l.Next()
		text := q[t.Start:t.End]
		switch t.Kind {
		case sqltok.EOF:
			return toks, nil
		case sqltok.Error:
			return toks, errSessLex
		case sqltok.Space, sqltok.Comment, sqltok.ExecCommentStart, sqltok.ExecCommentEnd:
		case sqltok.Ident:
			toks = append(toks, sessToken{kind: slWord, text: strings.ToLower(text)})
		case sqltok.Number:
			toks = append(toks, sessToken{kind: slNumber})
		case sqltok.Placeholder:
			toks = append(toks, sessToken{kind: slParam})
		case sqltok.Variable:
			toks = append(toks, slVariable(text))
		case sqltok.String, sqltok.QuotedIdent:
			toks = slQuotedToken(toks, t.Kind, text)
		case sqltok.Punct:
			if text == "?" { // PostgreSQL's ? operator too: a driver may bind it
				toks = append(toks, sessToken{kind: slParam})
				break
			}
			if n := len(toks); text == "=" && n > 0 && toks[n-1].kind == slOp && toks[n-1].text == ":" && q[t.Start-1] == ':' {
				toks[n-1].text = ":="
				break
			}
			toks = append(toks, sessToken{kind: slOp, text: text})
		}
	}
}

// slQuotedToken appends a string or a quoted name. A prefix (E'..', N'..',
// X'..', U&'..') is a word of its own before the string: a SET reads such
// a value as computed, not as the literal it spells.
func slQuotedToken(toks []sessToken, kind sqltok.Kind, text string) []sessToken {
	if text[0] == '$' {
		return append(toks, sessToken{kind: slString})
	}
	if k := strings.IndexAny(text, "'\"`["); k > 0 {
		prefix := text[:k]
		if p, ok := strings.CutSuffix(prefix, "&"); ok {
			toks = append(toks, sessToken{kind: slWord, text: strings.ToLower(p)}, sessToken{kind: slOp, text: "&"})
		} else {
			toks = append(toks, sessToken{kind: slWord, text: strings.ToLower(prefix)})
		}
		text = text[k:]
	}
	inner := text[1 : len(text)-1]
	if kind == sqltok.String {
		return append(toks, sessToken{kind: slString, text: inner})
	}
	closer := text[len(text)-1]
	if closer != ']' {
		inner = strings.ReplaceAll(inner, string([]byte{closer, closer}), string(closer))
	}
	return append(toks, sessToken{kind: slQuoted, text: inner})
}

// slVariable is a MySQL @name, @'name' or @@[scope.]name, lower-cased.
func slVariable(text string) sessToken {
	if name, ok := strings.CutPrefix(text, "@@"); ok {
		return sessToken{kind: slSysVar, text: strings.ToLower(name)}
	}
	name := text[1:]
	if name != "" && (name[0] == '\'' || name[0] == '"' || name[0] == '`') {
		name = name[1 : len(name)-1]
	}
	return sessToken{kind: slUserVar, text: strings.ToLower(name)}
}
