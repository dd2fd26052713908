package gormplugin_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// A merged read gives back every connection it took — read to the end,
// closed early, cancelled midway or failed on one table — and a table's
// error surfaces as that error, never as a partial result.

// settled waits until no connection of e's pools is in use and the
// goroutines are back to at most base (database/sql and drivers finish
// theirs asynchronously).
func settled(t *testing.T, e *readEnv, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		inUse := e.pools[0].Stats().InUse + e.pools[1].Stats().InUse
		g := goroutines(e)
		if inUse == 0 && g <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Logf("%s", buf[:runtime.Stack(buf, true)])
			t.Fatalf("%d connections still in use, %d goroutines (were %d)", inUse, g, base)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goroutines counts the goroutines, less those go-sql-driver/mysql keeps
// for each open connection of e's pools (the pools may keep one more idle
// connection after a read: not a leak).
func goroutines(e *readEnv) int {
	g := runtime.NumGoroutine()
	if e.be == "mariadb" {
		g -= e.pools[0].Stats().OpenConnections + e.pools[1].Stats().OpenConnections
	}
	return g
}

func TestMergedReadReleasesConnectionsOnCancelAndEarlyClose(t *testing.T) {
	eachReadBackendIn(t, "gormatk_rel_", func(t *testing.T, e *readEnv) {
		var warm []ReadOrder
		if err := e.db.Order("id").Find(&warm).Error; err != nil {
			t.Fatal(err)
		}
		t.Run("cancelled midway", func(t *testing.T) {
			base := goroutines(e)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rows, err := e.db.WithContext(ctx).Model(&ReadOrder{}).Order("amount").Order("id").Rows()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				if n++; n == 3 {
					cancel()
				}
			}
			// database/sql closes the rows when it sees the cancellation,
			// which may come after the last row: then every row was read.
			if err := rows.Err(); !errors.Is(err, context.Canceled) && (err != nil || n != len(warm)) {
				t.Errorf("read %d rows of %d after cancelling at 3, then %v; want context.Canceled", n, len(warm), err)
			}
			_ = rows.Close()
			settled(t, e, base)
		})
		t.Run("cancelled midway on pools of one connection", func(t *testing.T) {
			base := goroutines(e)
			for _, p := range e.pools {
				p.SetMaxOpenConns(1)
			}
			defer func() {
				for _, p := range e.pools {
					p.SetMaxOpenConns(0)
				}
			}()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rows, err := e.db.WithContext(ctx).Model(&ReadOrder{}).Order("amount desc").Order("id").Rows()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				if n++; n == 2 {
					cancel()
				}
			}
			_ = rows.Close()
			var all []ReadOrder // the pools still serve a merged read
			if err := e.db.Order("id").Find(&all).Error; err != nil || len(all) != len(warm) {
				t.Errorf("after a cancelled read on pools of one connection: %d rows, %v", len(all), err)
			}
			settled(t, e, base)
		})
		t.Run("closed after one row", func(t *testing.T) {
			base := goroutines(e)
			rows, err := e.db.Model(&ReadOrder{}).Order("id desc").Rows()
			if err != nil {
				t.Fatal(err)
			}
			rows.Next()
			_ = rows.Close()
			settled(t, e, base)
		})
		t.Run("Row reads one", func(t *testing.T) {
			base := goroutines(e)
			var id int64
			if err := e.db.Model(&ReadOrder{}).Select("id").Order("id").Row().Scan(&id); err != nil || id != warm[0].ID {
				t.Errorf("Row: %d, %v; want %d", id, err, warm[0].ID)
			}
			settled(t, e, base)
		})
		t.Run("Find into one map takes one row", func(t *testing.T) {
			base := goroutines(e)
			m := map[string]any{}
			if err := e.db.Model(&ReadOrder{}).Order("id").Find(&m).Error; err != nil {
				t.Fatal(err)
			}
			settled(t, e, base)
		})
		t.Run("cancelled before", func(t *testing.T) {
			base := goroutines(e)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var rows []ReadOrder
			err := e.db.WithContext(ctx).Order("id").Find(&rows).Error
			if !errors.Is(err, context.Canceled) || len(rows) != 0 {
				t.Errorf("Find on a cancelled context: %d rows, %v; want none, context.Canceled", len(rows), err)
			}
			settled(t, e, base)
		})
		t.Run("a hook failing", func(t *testing.T) {
			base := goroutines(e)
			var rows []failingOrder
			err := e.db.Order("id").Limit(7).Find(&rows).Error
			if !errors.Is(err, errHook) {
				t.Errorf("Find: %v; want the hook's error", err)
			}
			settled(t, e, base)
		})
	})
}

var errHook = errors.New("hook failed")

// failingOrder is a ReadOrder whose AfterFind fails.
type failingOrder struct{ ReadOrder }

func (failingOrder) TableName() string { return "read_orders" }

func (*failingOrder) AfterFind(*gorm.DB) error { return errHook }

func TestMergedReadFailsWithTheTableErrorNeverPartially(t *testing.T) {
	eachReadBackendIn(t, "gormatk_fail_", func(t *testing.T, e *readEnv) {
		base := goroutines(e)
		if err := e.plain[1].Exec("DROP TABLE read_orders_1").Error; err != nil {
			t.Fatal(err)
		}
		reads := map[string]func() (int, error){
			"Find": func() (int, error) {
				var rows []ReadOrder
				err := e.db.Order("id").Find(&rows).Error
				return len(rows), err
			},
			"Find with Limit": func() (int, error) {
				var rows []ReadOrder
				err := e.db.Order("amount desc").Limit(3).Find(&rows).Error
				return len(rows), err
			},
			"grouped": func() (int, error) {
				var rows []userAgg
				err := model(e.db).Select("user_id, count(*) as n").Group("user_id").Find(&rows).Error
				return len(rows), err
			},
			"Count": func() (int, error) {
				var n int64
				err := model(e.db).Count(&n).Error
				return int(n), err
			},
			"Pluck": func() (int, error) {
				var ids []int64
				err := model(e.db).Order("id").Pluck("id", &ids).Error
				return len(ids), err
			},
			"Rows": func() (int, error) {
				rows, err := model(e.db).Order("id").Rows()
				if err != nil {
					return 0, err
				}
				defer rows.Close()
				n := 0
				for rows.Next() {
					n++
				}
				return n, rows.Err()
			},
		}
		for name, read := range reads {
			n, err := read()
			if err == nil || errors.Is(err, gormplugin.ErrUnsupported) {
				t.Errorf("%s with a table dropped: %d rows, %v; want the database's error", name, n, err)
			} else if n != 0 {
				t.Errorf("%s with a table dropped: %d rows beside %v", name, n, err)
			}
		}
		settled(t, e, base)
	})
}
