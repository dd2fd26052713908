package gormplugin

import (
	"database/sql"
	"fmt"
	"reflect"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/shardkey/shardkey/shardconf"
)

// WithTimeLocation says in which location time sharding values are
// stored (UTC unless given): for go-sql-driver/mysql, its DSN's loc. A
// time routes by its wall clock, but drivers store different wall clocks
// for one time.Time: go-sql-driver/mysql converts it to loc, pgx writes a
// PostgreSQL timestamp column with the value's own wall clock and a
// timestamptz with its instant, SQLite keeps its text. A time whose wall
// clock in loc is its own wall clock (the same UTC offset at that
// instant) is stored alike by all of them, so it is the only kind
// routed: a time.Time sharding value in another offset is refused
// (ErrTimeLocation) in a created row, an assignment and a WHERE clause,
// rather than converted, which would be right for some drivers and put
// the row in the wrong table for others. Convert with t.In(loc) first.
//
// A *gorm.DB opened with gorm.io/driver/mysql from a DSN gives its loc
// when this option is not given; given, it must name the same location,
// else db.Use fails (a UTC time would be stored at loc's wall clock).
// Pools given by WithDataSources cannot be read: give their DSNs the same
// loc.
func WithTimeLocation(loc *time.Location) Option { return func(p *Plugin) { p.timeLoc = loc } }

// location is where time sharding values must be.
func (p *Plugin) location() *time.Location {
	if p.timeLoc == nil {
		return time.UTC
	}
	return p.timeLoc
}

// checkTime refuses v, a value for sharding column col of table, if it is
// a time whose offset differs from the location's at that instant.
func (p *Plugin) checkTime(table, col string, v any) error {
	pv, ok := plainValue(v)
	if !ok {
		return nil
	}
	t, ok := pv.(time.Time)
	if !ok {
		return nil
	}
	_, off := t.Zone()
	_, want := t.In(p.location()).Zone()
	if off == want {
		return nil
	}
	re := &shardconf.RouteError{Table: table, Column: col, Value: t.String(), Err: ErrTimeLocation}
	return fmt.Errorf("%w: %w (the database may store it at another wall clock than it routes by; pass t.In(%s))", ErrUnsupported, re, p.location())
}

// checkRowTimes checks the sharding values of created rows.
func (p *Plugin) checkRowTimes(table string, rows []map[string]any) error {
	for _, row := range rows {
		for _, c := range p.rules.ShardingColumns(table) {
			if err := p.checkTime(table, c, row[c]); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkWhereTimes checks the times a WHERE clause and a loaded model
// route an UPDATE, DELETE or read by. The WHERE clause is not split by
// column here: on a table with a sharding column that may hold a time,
// every time in it is checked (a false positive only refuses).
func (p *Plugin) checkWhereTimes(stmt *gorm.Statement, table string) error {
	if !p.timeSharded(stmt, table) {
		return nil
	}
	if w, ok := stmt.Clauses["WHERE"].Expression.(clause.Where); ok {
		if err := p.walkTimes(table, w.Exprs); err != nil {
			return err
		}
	}
	if row, ok := keyedModelRow(stmt); ok {
		for _, c := range p.rules.ShardingColumns(table) {
			if f := stmt.Schema.LookUpField(c); f != nil {
				if v, zero := f.ValueOf(stmt.Context, row); !zero {
					if err := p.checkTime(table, c, v); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// walkTimes checks every value in es.
func (p *Plugin) walkTimes(table string, es []clause.Expression) error {
	var vals []any
	for _, e := range es {
		switch x := e.(type) {
		case clause.Eq:
			vals = append(vals, x.Value)
		case clause.Neq:
			vals = append(vals, x.Value)
		case clause.Gt:
			vals = append(vals, x.Value)
		case clause.Gte:
			vals = append(vals, x.Value)
		case clause.Lt:
			vals = append(vals, x.Value)
		case clause.Lte:
			vals = append(vals, x.Value)
		case clause.IN:
			vals = append(vals, x.Values...)
		case clause.Expr:
			vals = append(vals, x.Vars...)
		case clause.NamedExpr:
			vals = append(vals, x.Vars...)
		case clause.AndConditions:
			if err := p.walkTimes(table, x.Exprs); err != nil {
				return err
			}
		case clause.OrConditions:
			if err := p.walkTimes(table, x.Exprs); err != nil {
				return err
			}
		case clause.NotConditions:
			if err := p.walkTimes(table, x.Exprs); err != nil {
				return err
			}
		case clause.Where:
			if err := p.walkTimes(table, x.Exprs); err != nil {
				return err
			}
		}
	}
	for _, v := range vals {
		list, ok := sliceValues(v)
		if !ok {
			list = []any{v}
		}
		for _, x := range list {
			if err := p.checkTime(table, "", namedValue(x)); err != nil {
				return err
			}
		}
	}
	return nil
}

// namedValue is the value of a named argument (sql.Named("t", v)).
func namedValue(x any) any {
	if n, ok := x.(sql.NamedArg); ok {
		return n.Value
	}
	return x
}

var timeType = reflect.TypeOf(time.Time{})

// timeSharded reports whether a sharding column of table may hold a
// time: its field is a time.Time, or a type whose driver value is not
// known from its kind (sql.NullTime, a Valuer), or the model is unknown.
func (p *Plugin) timeSharded(stmt *gorm.Statement, table string) bool {
	for _, c := range p.rules.ShardingColumns(table) {
		if stmt.Schema == nil {
			return true
		}
		f := stmt.Schema.LookUpField(c)
		if f == nil {
			return true
		}
		ft := f.IndirectFieldType
		switch {
		case ft == timeType, ft.Kind() == reflect.Struct, ft.Kind() == reflect.Interface:
			return true
		}
	}
	return false
}

// adoptDSNLocation takes the location from the MySQL DSN db was opened
// with (see WithTimeLocation), or refuses a WithTimeLocation that differs
// from it.
func (p *Plugin) adoptDSNLocation(db *gorm.DB) error {
	loc := dsnLocation(db.Dialector)
	switch {
	case loc == nil:
		return nil
	case p.timeLoc == nil:
		p.timeLoc = loc
		return nil
	case p.timeLoc != loc && p.timeLoc.String() != loc.String():
		return fmt.Errorf("gormplugin: WithTimeLocation(%s) differs from the MySQL DSN's loc %s, in which the driver stores times", p.timeLoc, loc)
	}
	return nil
}

// dsnLocation is the loc of the go-sql-driver/mysql DSN a
// gorm.io/driver/mysql Dialector holds (Config.DSNConfig.Loc), read by
// reflection so that the plugin does not import the MySQL driver; nil
// when there is none (another dialect, a dialector built on a pool).
func dsnLocation(d gorm.Dialector) *time.Location {
	if d == nil || d.Name() != "mysql" {
		return nil
	}
	v := reflect.ValueOf(d)
	for _, name := range []string{"Config", "DSNConfig", "Loc"} {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return nil
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return nil
		}
		if v = v.FieldByName(name); !v.IsValid() {
			return nil
		}
	}
	if !v.CanInterface() {
		return nil
	}
	loc, _ := v.Interface().(*time.Location)
	return loc
}
