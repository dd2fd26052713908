package gormplugin

import (
	"testing"

	"github.com/shardkey/shardkey/internal/dialect"
)

func TestTwoPhaseTxControlFindsEveryStatementThatEndsOrReshapesATransaction(t *testing.T) {
	for _, c := range []struct {
		d     dialect.Name
		query string
		want  string
	}{
		{dialect.Postgres, "COMMIT", "COMMIT"},
		{dialect.Postgres, "  /* x */ commit work", "COMMIT"},
		{dialect.Postgres, "end", "END"},
		{dialect.Postgres, "ABORT", "ABORT"},
		{dialect.Postgres, "rollback to savepoint a", "ROLLBACK"},
		{dialect.Postgres, "SAVEPOINT a", "SAVEPOINT"},
		{dialect.Postgres, "release savepoint a", "RELEASE"},
		{dialect.Postgres, "PREPARE TRANSACTION 'x'", "PREPARE TRANSACTION"},
		{dialect.Postgres, "COMMIT PREPARED 'x'", "COMMIT"},
		{dialect.Postgres, "START TRANSACTION", "START"},
		{dialect.Postgres, "INSERT INTO t VALUES (1); COMMIT; INSERT INTO t VALUES (2)", "a text of several statements"},
		{dialect.Postgres, `SELECT 'a\' , ' ; COMMIT ; --'`, "a text of several statements"},
		{dialect.Postgres, "SELECT 'a;b'", "a text of several statements"},
		{dialect.Postgres, "UPDATE t SET a = 1; ", ""},
		{dialect.Postgres, "UPDATE t SET a = 1 -- ; COMMIT\n", "a text of several statements"},
		{dialect.Postgres, "SELECT 'COMMIT'", ""},
		{dialect.Postgres, "PREPARE q AS SELECT 1", ""},
		{dialect.Postgres, "SELECT commit FROM t", ""},
		{dialect.Postgres, "INSERT INTO notes (note) VALUES ($1)", ""},
		{dialect.MySQL, "XA END 'x'", "XA"},
		{dialect.MySQL, "SET autocommit = 1", "SET autocommit"},
		{dialect.MySQL, "SET @@session.autocommit = 1", "SET autocommit"},
		{dialect.MySQL, "SET NAMES utf8mb4, autocommit = 1", "SET autocommit"},
		{dialect.MySQL, "SET @x = 1", ""},
		{dialect.MySQL, "/*!COMMIT*/", "COMMIT"},
		{dialect.MySQL, "BEGIN", "BEGIN"},
		{dialect.SQLite, "END TRANSACTION", "END"},
		{dialect.SQLite, "SELECT 1", ""},
	} {
		if got := txControl(c.query, c.d); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.d, c.query, got, c.want)
		}
	}
}

func TestTwoPhaseSavepointNamesAreIdentifiersOnly(t *testing.T) {
	for name, ok := range map[string]bool{"sp1": true, "sp12345678901234567890": true, "_x": true,
		"": false, "1sp": false, "sp1; COMMIT": false, "sp-1": false, `"sp"`: false} {
		if err := savepointName(name); (err == nil) != ok {
			t.Errorf("savepointName(%q) = %v", name, err)
		}
	}
}
