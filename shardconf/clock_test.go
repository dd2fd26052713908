package shardconf_test

import (
	"errors"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen/keygentest"
	"github.com/shardkey/shardkey/shardconf"
)

const intervalToNow = `
rules:
- !SHARDING
  tables:
    t_log:
      actualDataNodes: ds.t_log_2021${['01','02','03','04','05']}
      tableStrategy: {standard: {shardingColumn: created, shardingAlgorithmName: by_month}}
  shardingAlgorithms:
    by_month:
      type: INTERVAL
      props: {datetime-pattern: 'yyyy-MM-dd HH:mm:ss', datetime-lower: '2021-01-01 00:00:00',
              sharding-suffix-pattern: yyyyMM, datetime-interval-unit: Months}
`

// An INTERVAL rule without datetime-upper ends at "now" when the router is
// built (ShardingSphere's LocalDateTime.now()); WithClock decides what now
// is, so the rule's last interval is the clock's month.
func TestWithClockSetsTheIntervalDefaultUpper(t *testing.T) {
	cfg, err := shardconf.Parse([]byte(intervalToNow))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		now   time.Time
		april string // where 2021-04-10 routes, "" for ErrNoRoute
	}{
		{time.Date(2021, 3, 15, 12, 0, 0, 0, time.Local), ""},
		{time.Date(2021, 4, 2, 0, 0, 0, 0, time.Local), "t_log_202104"},
	} {
		r, err := shardconf.NewRouter(cfg, shardconf.WithClock(keygentest.NewClock(tc.now)))
		if err != nil {
			t.Fatal(err)
		}
		ts, err := r.Route("t_log", shardconf.Eq("created", "2021-04-10 08:00:00"))
		switch {
		case tc.april == "" && !errors.Is(err, shardconf.ErrNoRoute):
			t.Errorf("now %s: April routes to %v, %v; want ErrNoRoute", tc.now, ts, err)
		case tc.april != "" && (err != nil || len(ts) != 1 || ts[0].Table != tc.april):
			t.Errorf("now %s: April routes to %v, %v; want %s", tc.now, ts, err, tc.april)
		}
	}
}
