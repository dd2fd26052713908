package sqlhook

import (
	"testing"
)

// A statement that changes how the server reads later statements
// (sql_mode flags, the client character set, standard_conforming_strings)
// is refused with one data source as with several; the harmless forms
// of the same statements pass.
func TestSessionRefusesChangesToHowStatementsAreRead(t *testing.T) {
	cases := []struct {
		d       Dialect
		q       string
		refused bool
	}{
		{MySQL, `SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'`, true},
		{MySQL, `SET sql_mode = 'ansi_quotes'`, true},
		{MySQL, `set @@SESSION.sql_mode := 'STRICT_TRANS_TABLES,PIPES_AS_CONCAT'`, true},
		{MySQL, `SET @@sql_mode = 'ORACLE'`, true},
		{MySQL, `SET GLOBAL sql_mode = 'ANSI'`, true},
		{MySQL, `SET time_zone = '+00:00', sql_mode = 'HIGH_NOT_PRECEDENCE'`, true},
		{MySQL, `/*!40101 SET SQL_MODE = 'IGNORE_SPACE' */`, true},
		{MySQL, `SET sql_mode = ?`, true},
		{MySQL, `SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')`, true},
		{MySQL, `SET sql_mode = (SELECT 'ANSI')`, true},
		{MySQL, `SELECT 1; SET sql_mode = 'ANSI'`, true},
		{MySQL, `SET NAMES gbk`, true},
		{MySQL, `SET NAMES 'sjis'`, true},
		{MySQL, `SET CHARACTER SET big5`, true},
		{MySQL, `SET character_set_client = cp932`, true},
		{MySQL, `SET @@session.character_set_client = ?`, true},
		{MySQL, `SET sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'`, false},
		{MySQL, `SET sql_mode = ''`, false},
		{MySQL, `SET sql_mode = DEFAULT`, false},
		{MySQL, `SET NAMES utf8mb4 COLLATE utf8mb4_bin`, false},
		{MySQL, `SET time_zone = '+00:00'`, false},
		{MySQL, `SELECT 'SET sql_mode = ''ANSI'''`, false},
		{PostgreSQL, `SET standard_conforming_strings = off`, true},
		{PostgreSQL, `SET SESSION standard_conforming_strings TO 'off'`, true},
		{PostgreSQL, `SET standard_conforming_strings = on`, false},
		{PostgreSQL, `SET standard_conforming_strings TO DEFAULT`, false},
		{PostgreSQL, `SET client_encoding = 'SJIS'`, true},
		{PostgreSQL, `SET NAMES 'BIG5'`, true},
		{PostgreSQL, `SET client_encoding TO 'UTF8'`, false},
		{PostgreSQL, `SET NAMES 'LATIN1'`, false},
		{PostgreSQL, `SELECT set_config('standard_conforming_strings', 'off', false)`, true},
		{PostgreSQL, `SELECT "set_config"($1, 'off', false)`, true},
		{PostgreSQL, `SELECT set_config('search_path', 'app', false)`, false},
		{PostgreSQL, `UPDATE pg_settings SET setting = 'off' WHERE name = 'standard_conforming_strings'`, true},
		{PostgreSQL, `SET search_path TO app`, false},
		{SQLite, `PRAGMA foreign_keys = ON`, false},
	}
	for _, c := range cases {
		if got := classifySession(c.d, c.q); got.lexMode != c.refused || c.refused && got.kind != sessRefuse {
			t.Errorf("%v %q: kind %d lexMode %v (%s), want refused=%v", c.d, c.q, got.kind, got.lexMode, got.why, c.refused)
		}
	}
}

// A function answering for one connection, or a temporary table, is
// refused across data sources however its name is quoted or cased, and
// UPDATE pg_settings (a SET in disguise) is refused.
func TestSessionRefusesPerConnectionStateHoweverQuoted(t *testing.T) {
	for _, c := range []struct {
		d Dialect
		q string
	}{
		{PostgreSQL, `SELECT "set_config"('search_path', 'evil', false)`},
		{PostgreSQL, `SELECT pg_catalog."lastval"()`},
		{PostgreSQL, `UPDATE pg_settings SET setting = 'evil' WHERE name = 'search_path'`},
		{SQLite, `SELECT "changes"()`},
		{SQLite, `CREATE TABLE "TEMP".x (a)`},
		{SQLite, `CREATE TABLE [Temp].x (a)`},
		{PostgreSQL, `CREATE TABLE "pg_temp".x (a int)`},
	} {
		if got := classifySession(c.d, c.q); got.kind != sessRefuse {
			t.Errorf("%v %q: kind %d, want refused", c.d, c.q, got.kind)
		}
	}
}
