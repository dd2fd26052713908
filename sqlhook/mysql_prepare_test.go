package sqlhook

import (
	"errors"
	"testing"

	"github.com/shardkey/shardkey/sqlhook/internal/ir"
)

// PREPARE and EXECUTE IMMEDIATE (MariaDB) run SQL text unrewritten on the
// default data source: text naming a logic, broadcast or physical table
// once MySQL's escapes are applied, and text sqlhook cannot read (a hex or
// bit literal, a variable, an expression), are refused before anything
// runs; a plain string naming none passes through.
func TestMySQLPrepareRefusesTextNamingOrHidingTable(t *testing.T) {
	h := testHook(t, MySQL)
	for _, q := range []string{
		`PREPARE s FROM 'DELETE FROM t_\dict'`,
		`PREPARE s FROM 'DELETE FROM t_or\der'`,
		`PREPARE s FROM 'DELETE FROM ' 't_dict'`,
		`PREPARE s FROM N'UPDATE T_DICT SET v = 1'`,
		`PREPARE s FROM 'INSERT INTO t_order_0 (user_id, order_id) VALUES (1, 1)'`,
		`PREPARE s FROM 'DELETE FROM ''t_dict'''`,
		`PREPARE s FROM 0x44454c4554452046524f4d20745f64696374`,
		`PREPARE s FROM X'44454c4554452046524f4d20745f64696374'`,
		`PREPARE s FROM b'0'`,
		`PREPARE s FROM @q`,
		`prepare s from @q`,
		`PREPARE s FROM CONCAT('DELETE FROM t_', 'dict')`,
		`EXECUTE IMMEDIATE 'DELETE FROM t_\dict'`,
		`EXECUTE IMMEDIATE @q`,
		`EXECUTE IMMEDIATE 0x44454c4554452046524f4d20745f64696374`,
		`EXECUTE IMMEDIATE CONCAT('DELETE FROM t_', 'dict')`,
		`/* c */ EXECUTE  IMMEDIATE 'UPDATE t_order SET status = 1'`,
		`SELECT 1; PREPARE s FROM @q`,
		`EXECUTE IMMEDIATE 'EXECUTE IMMEDIATE ''DELETE FROM t_\\dict'''`,
		`EXECUTE IMMEDIATE 'PREPARE s FROM @q'`,
	} {
		if _, err := h.route(q, nil); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", q, err)
		}
	}
	for _, q := range []string{
		`PREPARE s FROM 'SELECT * FROM t_other'`,
		`PREPARE s FROM 'SELECT ''t_dictionary'', t_\%dict'`,
		`PREPARE s FROM 'DELETE FROM t\_dict'`, // \_ keeps its backslash: not t_dict
		`EXECUTE IMMEDIATE 'SELECT 1'`,
		`EXECUTE s USING @a`,
		`DEALLOCATE PREPARE s`,
	} {
		r, err := h.route(q, nil)
		if err != nil || len(r.units) != 1 || r.units[0].sql != q {
			t.Errorf("%s: %v, want it passed through unchanged", q, err)
		}
	}
}

// ir.MyUnescape reads a string literal's body as MySQL does.
func TestMySQLUnescapeMatchesServer(t *testing.T) {
	for in, want := range map[string]string{
		`t_\dict`:    "t_dict",
		`a\'b''c`:    "a'b'c",
		`\n\t\0\Z`:   "\n\t\x00\x1a",
		`\%\_\\`:     `\%\_\`,
		`\"x\"`:      `"x"`,
		`tail\`:      `tail\`,
		`\b\r`:       "\b\r",
		`no escapes`: "no escapes",
	} {
		if got := ir.MyUnescape(in, '\''); got != want {
			t.Errorf("myUnescape(%q) = %q, want %q", in, got, want)
		}
	}
}
