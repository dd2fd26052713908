package gormplugin

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"
)

// orderKey is one ORDER BY term resolved to a model field.
type orderKey struct {
	field *schema.Field
	desc  bool
}

// orderKeys resolves ORDER BY to model fields, so merged rows can be
// sorted as the database would sort one table. Terms it cannot resolve
// are an error: a LIMIT over several tables then has no right answer.
func orderKeys(stmt *gorm.Statement, order clause.OrderBy) ([]orderKey, error) {
	if order.Expression != nil {
		return nil, fmt.Errorf("%w: an ORDER BY expression over several tables", ErrUnsupported)
	}
	var keys []orderKey
	for _, c := range order.Columns {
		terms := []string{c.Column.Name}
		if c.Column.Raw {
			terms = strings.Split(c.Column.Name, ",")
		}
		for _, term := range terms {
			fields := strings.Fields(term)
			if len(fields) == 0 || len(fields) > 2 || stmt.Schema == nil {
				return nil, fmt.Errorf("%w: ORDER BY %q over several tables", ErrUnsupported, term)
			}
			desc := c.Desc
			if len(fields) == 2 {
				switch strings.ToLower(fields[1]) {
				case "desc":
					desc = true
				case "asc":
				default:
					return nil, fmt.Errorf("%w: ORDER BY %q over several tables", ErrUnsupported, term)
				}
			}
			name := unquote(fields[0])
			if name == strings.ToLower(clause.PrimaryKey) {
				name = primaryColumn(stmt)
			}
			f := stmt.Schema.LookUpField(name)
			if f == nil {
				return nil, fmt.Errorf("%w: ORDER BY %q is not a field of %s, so rows from several tables cannot be ordered", ErrUnsupported, term, stmt.Schema.Name)
			}
			keys = append(keys, orderKey{field: f, desc: desc})
		}
	}
	return keys, nil
}

// sortRows sorts a slice of model values (or pointers to them) by keys.
func sortRows(rows reflect.Value, keys []orderKey) {
	sort.SliceStable(rows.Interface(), func(i, j int) bool {
		a, b := reflect.Indirect(rows.Index(i)), reflect.Indirect(rows.Index(j))
		for _, k := range keys {
			va, _ := k.field.ValueOf(context.Background(), a)
			vb, _ := k.field.ValueOf(context.Background(), b)
			c := compareAny(va, vb)
			if c == 0 {
				continue
			}
			if k.desc {
				return c > 0
			}
			return c < 0
		}
		return false
	})
}

// compareAny orders the field values GORM models hold.
func compareAny(a, b any) int {
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	for ra.Kind() == reflect.Pointer {
		if ra.IsNil() {
			return -1
		}
		ra = ra.Elem()
	}
	for rb.Kind() == reflect.Pointer {
		if rb.IsNil() {
			return 1
		}
		rb = rb.Elem()
	}
	if ta, ok := ra.Interface().(time.Time); ok {
		if tb, ok := rb.Interface().(time.Time); ok {
			return ta.Compare(tb)
		}
	}
	switch {
	case ra.CanInt() && rb.CanInt():
		return cmp.Compare(ra.Int(), rb.Int())
	case ra.CanUint() && rb.CanUint():
		return cmp.Compare(ra.Uint(), rb.Uint())
	case ra.CanFloat() && rb.CanFloat():
		return cmp.Compare(ra.Float(), rb.Float())
	case ra.Kind() == reflect.String && rb.Kind() == reflect.String:
		return strings.Compare(ra.String(), rb.String())
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}
