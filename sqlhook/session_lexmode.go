package sqlhook

import (
	"strings"
)

// Statements that change how the server reads later statements' text.
//
// sqlhook reads every statement's text (to route it, and to see what it
// does to session state) assuming the server's default reading: a
// backslash escapes in MySQL strings, "..." is a MySQL string, || is
// OR, PostgreSQL's '...' strings take no backslash escapes, and the
// client character set is one where a backslash or quote byte is never
// part of another character. A session that changes any of these makes
// the server read a later statement differently from sqlhook: text
// sqlhook takes for a string literal runs as code (a user variable
// assigned, a condition OR-ed in) and a statement routed to one shard
// reads or writes rows of others. So such a change is refused, with one
// data source as with several, before it is sent.

// lexModeRefused is the refusal of a statement that changes how later
// statements are read.
func lexModeRefused(why string) sessClass {
	return sessClass{kind: sessRefuse, why: why + "; sqlhook would read later statements differently from the server", lexMode: true}
}

// safeSQLModes are the MySQL/MariaDB sql_mode flags that leave how a
// statement is read, and what a sharding value compares equal to, as
// sqlhook assumes. ANSI_QUOTES, NO_BACKSLASH_ESCAPES, PIPES_AS_CONCAT,
// IGNORE_SPACE, HIGH_NOT_PRECEDENCE, EMPTY_STRING_IS_NULL,
// SIMULTANEOUS_ASSIGNMENT, TIME_ROUND_FRACTIONAL and the combination
// modes holding them (ANSI, ORACLE, POSTGRESQL, MSSQL, DB2, MAXDB) are
// not.
var safeSQLModes = map[string]bool{
	"": true, "STRICT_TRANS_TABLES": true, "STRICT_ALL_TABLES": true, "NO_ZERO_IN_DATE": true,
	"NO_ZERO_DATE": true, "ERROR_FOR_DIVISION_BY_ZERO": true, "NO_AUTO_CREATE_USER": true,
	"NO_ENGINE_SUBSTITUTION": true, "ONLY_FULL_GROUP_BY": true, "TRADITIONAL": true,
	"ALLOW_INVALID_DATES": true, "NO_DIR_IN_CREATE": true, "NO_KEY_OPTIONS": true,
	"NO_TABLE_OPTIONS": true, "NO_FIELD_OPTIONS": true, "IGNORE_BAD_TABLE_OPTIONS": true,
	"NO_AUTO_VALUE_ON_ZERO": true, "REAL_AS_FLOAT": true, "NO_UNSIGNED_SUBTRACTION": true,
}

// safeMySQLCharsets are client character sets in which no multibyte
// character holds a backslash or quote byte (GBK, BIG5, SJIS, CP932 and
// GB18030 do, which hides a quote from a byte-wise reader).
var safeMySQLCharsets = map[string]bool{
	"utf8": true, "utf8mb3": true, "utf8mb4": true, "latin1": true, "ascii": true, "binary": true, "default": true,
}

// classifyLexMode returns the refusal of a statement of dialect d that
// changes how later statements are read, and whether there is one.
func classifyLexMode(d Dialect, toks []sessToken) (sessClass, bool) {
	switch d {
	case MySQL:
		if tokWordAt(toks, 0) == "set" {
			return mysqlSetLexMode(toks[1:])
		}
	case PostgreSQL:
		return pgLexMode(toks)
	}
	return sessClass{}, false
}

// mysqlSetLexMode checks the assignments of a MySQL SET (toks follow
// SET) to sql_mode and to the client character set, whatever the scope:
// a GLOBAL one reaches the pool's later connections.
func mysqlSetLexMode(toks []sessToken) (sessClass, bool) {
	switch w := tokWordAt(toks, 0); {
	case w == "names" || w == "charset":
		return mysqlCharsetLexMode(toks[1:])
	case w == "character" && tokWordAt(toks, 1) == "set":
		return mysqlCharsetLexMode(toks[2:])
	}
	depth, start := 0, 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) {
			if tokOpAt(toks, i, "(") {
				depth++
			} else if tokOpAt(toks, i, ")") {
				depth--
			}
			if !tokOpAt(toks, i, ",") || depth != 0 {
				continue
			}
		}
		if cls, refused := mysqlAssignLexMode(toks[start:i]); refused {
			return cls, true
		}
		start = i + 1
	}
	return sessClass{}, false
}

// mysqlAssignLexMode checks one "target = value" of a MySQL SET.
func mysqlAssignLexMode(a []sessToken) (sessClass, bool) {
	eq := -1
	for i, t := range a {
		if t.kind == slOp && (t.text == "=" || t.text == ":=") {
			eq = i
			break
		}
	}
	if eq < 1 {
		return sessClass{}, false
	}
	t := a[eq-1] // the variable's name, after any scope word
	name := t.text
	if t.kind == slSysVar {
		if _, rest, ok := cutVarScope(name); ok {
			name = rest
		}
	} else if t.kind != slWord && t.kind != slQuoted {
		return sessClass{}, false
	}
	vals := a[eq+1:]
	switch strings.ToLower(name) {
	case "sql_mode":
		return mysqlSQLModeLexMode(vals)
	case "character_set_client":
		return mysqlCharsetLexMode(vals)
	}
	return sessClass{}, false
}

// mysqlSQLModeLexMode accepts a sql_mode given as string literals or
// DEFAULT whose every flag is in safeSQLModes; anything computed could
// hold any flag.
func mysqlSQLModeLexMode(vals []sessToken) (sessClass, bool) {
	if len(vals) == 1 && tokWordAt(vals, 0) == "default" {
		return sessClass{}, false
	}
	if len(vals) == 0 {
		return lexModeRefused("SET sql_mode without a value"), true
	}
	for _, v := range vals {
		if v.kind != slString {
			return lexModeRefused("SET sql_mode to a computed value (it may hold ANSI_QUOTES, NO_BACKSLASH_ESCAPES, PIPES_AS_CONCAT...); give the modes as a string literal"), true
		}
		for _, m := range strings.Split(v.text, ",") {
			if m = strings.ToUpper(strings.TrimSpace(m)); !safeSQLModes[m] {
				return lexModeRefused("SET sql_mode with " + m), true
			}
		}
	}
	return sessClass{}, false
}

// mysqlCharsetLexMode accepts SET NAMES / CHARACTER SET /
// character_set_client with a character set of safeMySQLCharsets.
func mysqlCharsetLexMode(vals []sessToken) (sessClass, bool) {
	if len(vals) == 0 || (vals[0].kind != slWord && vals[0].kind != slString && vals[0].kind != slQuoted) ||
		!safeMySQLCharsets[strings.ToLower(vals[0].text)] {
		cs := "a computed value"
		if len(vals) > 0 && vals[0].text != "" {
			cs = vals[0].text
		}
		return lexModeRefused("a client character set of " + cs + " (only utf8mb4, utf8, latin1, ascii and binary are read alike)"), true
	}
	return sessClass{}, false
}

// pgLexMode refuses SET standard_conforming_strings to anything but on
// (backslashes would escape in '...' strings), a client encoding other
// than UTF-8 or a single-byte one (SJIS, BIG5, GBK, UHC, GB18030 and
// JOHAB can hide a backslash inside a character), and the same through
// set_config() or UPDATE pg_settings unless the setting named is a
// literal other than those.
func pgLexMode(toks []sessToken) (sessClass, bool) {
	switch tokWordAt(toks, 0) {
	case "set":
		i := 1
		if w := tokWordAt(toks, i); w == "session" || w == "local" {
			i++
		}
		name := ""
		if i < len(toks) && (toks[i].kind == slWord || toks[i].kind == slQuoted) {
			name = toks[i].text
		}
		vals := toks[i+1:]
		if len(vals) > 0 && (tokWordAt(vals, 0) == "to" || tokOpAt(vals, 0, "=")) {
			vals = vals[1:]
		}
		return pgSettingLexMode(name, vals)
	case "update":
		for _, t := range toks {
			if t.kind == slWord && t.text == "pg_settings" {
				return pgNamesLexSetting(toks)
			}
		}
	}
	for i, t := range toks {
		if (t.kind == slWord || t.kind == slQuoted) && t.text == "set_config" && tokOpAt(toks, i+1, "(") {
			if i+2 >= len(toks) || toks[i+2].kind != slString {
				return lexModeRefused("set_config() of a setting not given as a literal (it may be standard_conforming_strings or client_encoding)"), true
			}
			if cls, refused := pgSettingLexMode(strings.ToLower(toks[i+2].text), nil); refused {
				return cls, true
			}
		}
	}
	return sessClass{}, false
}

// pgNamesLexSetting refuses an UPDATE of pg_settings that may name
// standard_conforming_strings or client_encoding.
func pgNamesLexSetting(toks []sessToken) (sessClass, bool) {
	for _, t := range toks {
		l := strings.ToLower(t.text)
		if t.kind == slParam || strings.Contains(l, "standard_conforming_strings") || strings.Contains(l, "client_encoding") {
			return lexModeRefused("UPDATE pg_settings that may change standard_conforming_strings or client_encoding"), true
		}
	}
	return sessClass{}, false
}

// pgSettingLexMode checks a setting of name to vals; vals nil means an
// unknown value (set_config), refused for the settings that matter.
func pgSettingLexMode(name string, vals []sessToken) (sessClass, bool) {
	switch name {
	case "standard_conforming_strings":
		if len(vals) == 1 {
			if v := strings.ToLower(vals[0].text); vals[0].kind == slWord || vals[0].kind == slString {
				if v == "on" || v == "true" || v == "yes" || v == "default" && vals[0].kind == slWord {
					return sessClass{}, false
				}
			}
		}
		return lexModeRefused("standard_conforming_strings other than on (backslashes would escape in '...' strings)"), true
	case "client_encoding", "names":
		if len(vals) == 1 && (vals[0].kind == slWord || vals[0].kind == slString) && pgSafeEncoding(vals[0].text) {
			return sessClass{}, false
		}
		return lexModeRefused("a client encoding other than UTF8 or a single-byte encoding"), true
	}
	return sessClass{}, false
}

func pgSafeEncoding(e string) bool {
	e = strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(e))
	switch e {
	case "utf8", "unicode", "sqlascii", "default":
		return true
	}
	for _, p := range []string{"latin", "iso8859", "win125", "win866", "win874", "koi8", "euc"} {
		if strings.HasPrefix(e, p) {
			return true
		}
	}
	return false
}
