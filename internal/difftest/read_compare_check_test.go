package difftest

import "testing"

// The comparison is itself checked: too lenient and the tester misses
// wrong answers, too strict and it reports answers SQL allows.

func rowsOf(vals ...[]any) [][]any { return vals }

func TestCompareRowsPermitsAnyOrderOfTiedRowsOnly(t *testing.T) {
	c := canon{db: "postgres", kinds: []colKind{kInt, kTextBin, kInt}}
	// payload (id, name), key (k)
	full := rowsOf([]any{int64(1), "a", int64(1)}, []any{int64(2), "b", int64(1)}, []any{int64(3), "c", int64(2)})
	ok := rowsOf([]any{int64(2), "b"}, []any{int64(1), "a"}, []any{int64(3), "c"})
	if p := c.compareRows(full, 2, true, window{0, -1}, ok); p != "" {
		t.Errorf("tied rows swapped: %s", p)
	}
	bad := rowsOf([]any{int64(3), "c"}, []any{int64(1), "a"}, []any{int64(2), "b"})
	if p := c.compareRows(full, 2, true, window{0, -1}, bad); p == "" {
		t.Error("rows out of ORDER BY order were accepted")
	}
	if p := c.compareRows(full, 2, false, window{0, -1}, bad); p != "" {
		t.Errorf("without ORDER BY any order is right: %s", p)
	}
}

func TestCompareRowsLetsLimitPickAnyRowsOfTheTiedBoundaryRun(t *testing.T) {
	c := canon{db: "postgres", kinds: []colKind{kInt, kInt}}
	full := rowsOf([]any{int64(1), int64(0)}, []any{int64(2), int64(5)}, []any{int64(3), int64(5)}, []any{int64(4), int64(5)}, []any{int64(5), int64(9)})
	// LIMIT 2: row 1, then any one of 2, 3, 4
	if p := c.compareRows(full, 1, true, window{0, 2}, rowsOf([]any{int64(1)}, []any{int64(4)})); p != "" {
		t.Errorf("a tied boundary row refused: %s", p)
	}
	if p := c.compareRows(full, 1, true, window{0, 2}, rowsOf([]any{int64(1)}, []any{int64(5)})); p == "" {
		t.Error("a row after the boundary run accepted")
	}
	if p := c.compareRows(full, 1, true, window{0, 2}, rowsOf([]any{int64(4)}, []any{int64(1)})); p == "" {
		t.Error("the first row moved behind the boundary run accepted")
	}
	// OFFSET 2 LIMIT 2 cuts the run (positions 1..3) at both ends: any two of its rows
	if p := c.compareRows(full, 1, true, window{2, 2}, rowsOf([]any{int64(2)}, []any{int64(3)})); p != "" {
		t.Errorf("OFFSET inside a tied run: %s", p)
	}
	if p := c.compareRows(full, 1, true, window{2, 2}, rowsOf([]any{int64(2)}, []any{int64(2)})); p == "" {
		t.Error("one tied row shown twice accepted")
	}
	if p := c.compareRows(full, 1, true, window{0, 9}, rowsOf([]any{int64(1)}, []any{int64(2)})); p == "" {
		t.Error("missing rows accepted")
	}
}

func TestCanonFoldsTextAsTheCollationCompares(t *testing.T) {
	maria := canon{db: "mariadb", kinds: []colKind{kTextBin, kTextDef}}
	if maria.key(0, "a ") != maria.key(0, "a") || maria.key(0, "A") == maria.key(0, "a") {
		t.Error("MariaDB utf8mb4_bin: trailing spaces insignificant, case significant")
	}
	if maria.key(1, "Bob ") != maria.key(1, "bob") {
		t.Error("MariaDB's default collation ignores case and trailing spaces")
	}
	pg := canon{db: "postgres", kinds: []colKind{kTextBin, kTextDef}}
	if pg.key(0, "a ") == pg.key(0, "a") || pg.key(1, "Bob") == pg.key(1, "bob") {
		t.Error("PostgreSQL's deterministic collations compare equality bytewise")
	}
	lite := canon{db: "sqlite", kinds: []colKind{kTextBin, kTextDef}}
	if lite.key(1, "Bob") != lite.key(1, "bob") || lite.key(0, "Bob") == lite.key(0, "bob") {
		t.Error("SQLite NOCASE folds ASCII case, BINARY does not")
	}
}

func TestCanonComparesExactNumbersAsSpelledAndFloatsToSevenDigits(t *testing.T) {
	c := canon{db: "postgres", kinds: []colKind{kDecimal, kFloat}}
	if c.key(0, "1.500") == c.key(0, "1.5") || c.key(0, "58.3333") == c.key(0, "58.3334") || c.key(0, int64(5)) != c.key(0, "5") {
		t.Error("decimals: compared as spelled, scale included; an integer as its digits")
	}
	if c.key(0, "9223372036854775807") == c.key(0, "9223372036854775806") {
		t.Error("bigints near the limit compared inexactly")
	}
	if c.key(1, 0.1+0.2) != c.key(1, 0.3) || c.key(1, 28.08299994468689) != c.key(1, 28.083) || c.key(1, 1.0) == c.key(1, 1.00001) {
		t.Error("floats: summation noise equal, real differences not")
	}
}

func TestCompareRowsLetsFloatKeysEqualToSevenDigitsTie(t *testing.T) {
	// ORDER BY AVG(score) DESC, cnt: 0.10000000000000002 and 0.1 tie, so cnt cannot order them
	c := canon{db: "postgres", kinds: []colKind{kInt, kFloat, kInt}}
	full := rowsOf([]any{int64(9), 0.10000000000000002, int64(9)}, []any{int64(3), 0.1, int64(3)})
	got := rowsOf([]any{int64(3)}, []any{int64(9)})
	if p := c.compareRows(full, 1, true, window{0, -1}, got); p != "" {
		t.Errorf("rows tied on a float key refused: %s", p)
	}
	c.kinds[1] = kDecimal // exact: the second key orders them
	if p := c.compareRows(full, 1, true, window{0, -1}, got); p == "" {
		t.Error("rows ordered against an exact key accepted")
	}
}

func TestCompareRowsTiesExactNumbersByValueNotSpelling(t *testing.T) {
	// PostgreSQL's AVG spells 1.5 with 20 decimals over one row, 16 over two: equal keys
	c := canon{db: "postgres", kinds: []colKind{kInt, kDecimal}}
	full := rowsOf([]any{int64(7), "1.5000000000000000"}, []any{int64(6), "1.50000000000000000000"})
	got := rowsOf([]any{int64(6)}, []any{int64(7)})
	if p := c.compareRows(full, 1, true, window{0, -1}, got); p != "" {
		t.Errorf("rows tied on equal numbers spelled differently refused: %s", p)
	}
}

func TestCompareRowsTellsAnIntegerFromItsText(t *testing.T) {
	c := canon{db: "postgres", kinds: []colKind{kInt}}
	if p := c.compareRows(rowsOf([]any{int64(5)}), 1, false, window{0, -1}, rowsOf([]any{"5"})); p == "" {
		t.Error(`"5" accepted for int64 5: a scan into any tells them apart`)
	}
}
