package gormplugin_test

import (
	"slices"
	"testing"
)

// TestDecimalLiteralBesideTheShardingKeyStillRoutes: a Where template
// holding a decimal number (id > 0.5) cannot reshape the WHERE clause
// around it, so another template's sharding key still routes the read
// (it made the whole clause narrow nothing: missing sharding key).
func TestDecimalLiteralBesideTheShardingKeyStillRoutes(t *testing.T) {
	for _, be := range twoBackends {
		t.Run(be, func(t *testing.T) {
			s := newSurf(t, be, "decimal_"+be)
			s.seed(t, 100, 101)
			var got []SurfOrder
			if err := s.db.Where("user_id = ?", 101).Where("id > 0.5").Find(&got).Error; err != nil {
				t.Fatal(err)
			}
			if p := products(got); !slices.Equal(p, want(101)) {
				t.Errorf("%v, want %v", p, want(101))
			}
		})
	}
}
