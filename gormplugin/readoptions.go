package gormplugin

// WithBinaryCollation declares that every text column read across several
// tables (ORDER BY, MIN, MAX, GROUP BY, DISTINCT, COUNT(DISTINCT), text
// comparisons in HAVING) compares bytewise in the database (PostgreSQL's
// "C" collation, MySQL's and MariaDB's *_bin, SQLite's BINARY), so the
// plugin may merge it. On MySQL and MariaDB text then compares as a *_bin
// PAD SPACE collation does (trailing spaces insignificant). Without it,
// such a merge is ErrUnsupported: a case-insensitive or locale-aware
// collation orders and groups text differently from its bytes, and merged
// rows would come back in an order, or in groups, no single table gives.
// An explicit binary COLLATE in an Order string, or one the model
// declares in a field's type tag, allows that column without the option
// (and a non-binary collation declared there is refused even with it); on
// PostgreSQL, grouping and DISTINCT on text are allowed without it (its
// deterministic collations compare equality bytewise).
//
// Bytewise means the bytes of the UTF-8 text the driver returns: on MySQL
// and MariaDB the columns must be utf8mb3, utf8mb4 or ascii (a latin1
// column's cp1252 bytes order otherwise: € is 0x80, after é in UTF-8).
//
// The declaration covers the columns a driver reports as text: MariaDB's
// UUID and INET6 columns arrive as CHAR, and MariaDB orders them by their
// binary form, not their text, so they must not be ordered (ORDER BY, MIN,
// MAX) across tables under this option.
func WithBinaryCollation() Option { return func(p *Plugin) { p.binaryText = true } }
