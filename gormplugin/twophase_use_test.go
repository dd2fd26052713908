package gormplugin_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"gorm.io/gorm"

	"github.com/shardkey/shardkey/gormplugin"
)

// What db.Use refuses with WithTwoPhaseCommit (and leaves running: nothing).

// useTwoPhase opens ds_0 and ds_1 on backend be and returns db.Use's
// error for a plugin with WithTwoPhaseCommit; pools replaces a pool.
func useTwoPhase(t *testing.T, be, name string, swap func(pools map[string]gorm.ConnPool), opts ...gormplugin.Option) error {
	t.Helper()
	gormplugin.StartMergedDB()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	d0, d1 := dialectorFor(t, be, "tpuse_"+name+"_ds0"), dialectorFor(t, be, "tpuse_"+name+"_ds1")
	db, db1 := reopen(t, d0, nil), reopen(t, d1, nil)
	p0, _ := db.DB()
	p1, _ := db1.DB()
	pools := map[string]gorm.ConnPool{"ds_0": p0, "ds_1": p1}
	if swap != nil {
		swap(pools)
	}
	p := gormplugin.New(nil, append([]gormplugin.Option{gormplugin.WithRules(rulesOf(t, dbRules)), gormplugin.WithDataSources(pools),
		gormplugin.WithTwoPhaseCommit()}, opts...)...)
	err := db.Use(p)
	if cerr := p.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	return err
}

func TestTwoPhaseCommitIsUnavailableOverSQLiteDataSources(t *testing.T) {
	err := useTwoPhase(t, "sqlite", "sqlite", nil)
	if !errors.Is(err, gormplugin.ErrTwoPhaseUnavailable) {
		t.Fatalf("db.Use over two SQLite data sources = %v, want ErrTwoPhaseUnavailable", err)
	}
}

// wrappedPool is a pool the plugin cannot take connections of its own from.
type wrappedPool struct{ gorm.ConnPool }

func TestTwoPhaseCommitRefusesADataSourcePoolThatIsNoSQLDB(t *testing.T) {
	err := useTwoPhase(t, "postgres", "wrapped", func(pools map[string]gorm.ConnPool) {
		pools["ds_1"] = wrappedPool{pools["ds_1"]}
	})
	if !errors.Is(err, gormplugin.ErrUnsupported) || !strings.Contains(err.Error(), "ds_1") || !strings.Contains(err.Error(), "*sql.DB") {
		t.Fatalf("db.Use with a wrapped pool = %v, want ErrUnsupported naming ds_1 and *sql.DB", err)
	}
}

func TestTwoPhaseCommitRefusesAGormDBOpenedOnNoDataSource(t *testing.T) {
	err := useTwoPhase(t, "postgres", "foreign", func(pools map[string]gorm.ConnPool) {
		pools["ds_0"] = pools["ds_1"] // the *gorm.DB's own pool (ds_0's database) is now no data source's
	})
	if !errors.Is(err, gormplugin.ErrUnsupported) || !strings.Contains(err.Error(), "own connection pool") {
		t.Fatalf("db.Use on a pool of no data source = %v, want ErrUnsupported", err)
	}
}

func TestTwoPhaseSettingsWithoutTwoPhaseCommitAreRefused(t *testing.T) {
	for name, o := range map[string]gormplugin.Option{
		"WithTwoPhaseLog":          gormplugin.WithTwoPhaseLog("ds_0", "my_log"),
		"WithTwoPhaseRecovery":     gormplugin.WithTwoPhaseRecovery(time.Minute, 0),
		"WithTwoPhaseKeyGenerator": gormplugin.WithTwoPhaseKeyGenerator(txIDs(t)),
	} {
		db := reopen(t, dialectorFor(t, "sqlite", "tpuse_settings"), nil)
		if err := db.Use(gormplugin.New(nil, gormplugin.WithRules(rulesOf(t, tableRules)), o)); err == nil || !strings.Contains(err.Error(), "WithTwoPhaseCommit") {
			t.Errorf("%s without WithTwoPhaseCommit: db.Use = %v", name, err)
		}
	}
}

func TestTwoPhaseCommitRefusesABadRecoverySetting(t *testing.T) {
	err := useTwoPhase(t, "postgres", "badtimeout", nil, gormplugin.WithTwoPhaseRecovery(time.Millisecond, 0))
	if err == nil {
		t.Fatal("db.Use with a 1ms two-phase timeout succeeded")
	}
}
