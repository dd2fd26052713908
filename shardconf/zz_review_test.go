package shardconf

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardkey/shardkey/keygen"
)

func zzRouter(t *testing.T, y string) *Router {
	t.Helper()
	cfg, err := Parse([]byte(y))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r, err := NewRouter(cfg)
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	return r
}

func zzShow(ts []Target, err error) string {
	if err != nil {
		return "ERR " + err.Error()
	}
	var s []string
	for _, x := range ts {
		s = append(s, x.String())
	}
	return "[" + strings.Join(s, " ") + "]"
}

const zzMod = `
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_0.t_order_${0..3}
      tableStrategy:
        standard: {shardingColumn: order_id, shardingAlgorithmName: m}
  shardingAlgorithms:
    m: {type: MOD, props: {sharding-count: 4}}
`

// 1. decimal-string bounds compared lexicographically by spanEmpty
func TestZZModStringRange(t *testing.T) {
	r := zzRouter(t, zzMod)
	t.Log("Between(2,10) ints   :", zzShow(r.Route("t_order", Between("order_id", 2, 10))))
	t.Log("Between('2','10')    :", zzShow(r.Route("t_order", Between("order_id", "2", "10"))))
	t.Log("Ge('9') & Le('10')   :", zzShow(r.Route("t_order", Ge("order_id", "9"), Le("order_id", "10"))))
	t.Log("Eq('10')             :", zzShow(r.Route("t_order", Eq("order_id", "10"))))
}

// 3/4. Stringer values
type zzUID int64

func (u zzUID) String() string { return fmt.Sprint(int64(u)) }

func TestZZHashModStringer(t *testing.T) {
	r := zzRouter(t, strings.Replace(zzMod, "type: MOD", "type: HASH_MOD", 1))
	id := keygen.ID(123)
	t.Log("keygen.ID(123)  :", zzShow(r.Route("t_order", Eq("order_id", id))))
	t.Log("int64(123)      :", zzShow(r.Route("t_order", Eq("order_id", int64(123)))))
	t.Log("&keygen.ID(123) :", zzShow(r.Route("t_order", Eq("order_id", &id))))
	t.Log("zzUID(123)      :", zzShow(r.Route("t_order", Eq("order_id", zzUID(123)))))
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Log("nil *keygen.ID PANIC:", p)
			}
		}()
		var nilID *keygen.ID
		t.Log("nil *keygen.ID:", zzShow(r.Route("t_order", Eq("order_id", nilID))))
	}()
}

// 2. INTERVAL exclusive lower bound that lost precision
const zzIv = `
rules:
- !SHARDING
  tables:
    t_log:
      actualDataNodes: ds_0.t_log_2024010${1..9}
      tableStrategy:
        standard: {shardingColumn: created, shardingAlgorithmName: iv}
  shardingAlgorithms:
    iv:
      type: INTERVAL
      props:
        datetime-pattern: "yyyy-MM-dd HH:mm:ss"
        datetime-lower: "2024-01-01 00:00:00"
        datetime-upper: "2024-01-09 00:00:00"
        sharding-suffix-pattern: yyyyMMdd
        datetime-interval-unit: DAYS
`

func TestZZIntervalExclusiveLowerCut(t *testing.T) {
	r := zzRouter(t, zzIv)
	t1 := time.Date(2024, 1, 5, 10, 0, 0, 100e6, time.UTC)
	t2 := time.Date(2024, 1, 5, 10, 0, 0, 900e6, time.UTC)
	mid := time.Date(2024, 1, 5, 10, 0, 0, 500e6, time.UTC)
	t.Log("Eq(mid)            :", zzShow(r.Route("t_log", Eq("created", mid))))
	t.Log("Gt(t1) & Lt(t2)    :", zzShow(r.Route("t_log", Gt("created", t1), Lt("created", t2))))
	t.Log("Gt(s1) & Lt(s2) str:", zzShow(r.Route("t_log", Gt("created", "2024-01-05 10:00:00.1"), Lt("created", "2024-01-05 10:00:00.9"))))
	t.Log("Gt(s1) & Le(s2) str:", zzShow(r.Route("t_log", Gt("created", "2024-01-05 10:00:00.1"), Le("created", "2024-01-05 10:00:00.9"))))
}
