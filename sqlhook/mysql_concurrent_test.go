package sqlhook

import (
	"sync"
	"testing"
)

// Statements compiled at the same time (parsers are pooled, each compile
// parses twice) each get their own plan.
func TestMySQLConcurrentCompilesAreIndependent(t *testing.T) {
	h := mysqlTestHook(t, mysqlRulesYAML, WithPlanCacheSize(0))
	stmts := map[string]string{
		"SELECT * FROM app_0.t_order WHERE user_id = 1 AND order_id = 3 LOCK IN SHARE MODE": "ds_1: SELECT * FROM `t_order_1` WHERE user_id = 1 AND order_id = 3 LOCK IN SHARE MODE\n",
		"DELETE FROM t_order WHERE user_id = 0 AND order_id = 2 AND code = 0x28":            "ds_0: DELETE FROM `t_order_0` WHERE user_id = 0 AND order_id = 2 AND code = 0x28\n",
		"UPDATE t_dict SET v = x'28' WHERE k = 'a'":                                         "ds_0: UPDATE `t_dict` SET v = x'28' WHERE k = 'a'\nds_1: UPDATE `t_dict` SET v = x'28' WHERE k = 'a'\n",
	}
	var wg sync.WaitGroup
	for range 8 {
		for q, want := range stmts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					r, err := h.route(q, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if got := show(r); got != want {
						t.Errorf("%s:\n got %s\nwant %s", q, got, want)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}
