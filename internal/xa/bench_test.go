package xa

import (
	"context"
	"testing"
)

func BenchmarkFormatParseGTRID(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		g := formatGTRID("0123abcd0123abcd", 1795000000000, int64(i+1), uint64(i))
		if _, err := parseGTRID(g); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewTx: a GTRID costs an id, 6 random bytes and the formatting.
func BenchmarkNewTx(b *testing.B) {
	pg := &fakeDB{r: fakeServer("10")}
	db := pg.open()
	defer db.Close()
	c, err := New(Config{Interval: -1}, []Source{{Name: "pg0", Dialect: "postgres", DB: db}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.NewTx(); err != nil {
			b.Fatal(err)
		}
	}
}
