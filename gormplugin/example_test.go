package gormplugin_test

import (
	"fmt"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/shardkey/shardkey/gormplugin"
	"github.com/shardkey/shardkey/keygen"
	"github.com/shardkey/shardkey/keygen/keygentest"
)

// Order's ID is GORM's default integer primary key: the plugin fills it
// with a Snowflake key instead of letting the database count.
type Order struct {
	ID     keygen.ID
	UserID int64
	Items  []OrderItem
}

// OrderItem belongs to an Order; its own key is generated too.
type OrderItem struct {
	ID      keygen.ID
	OrderID keygen.ID
	SKU     string
}

func Example() {
	// A fixed clock keeps the output stable; real code omits WithClock.
	clock := keygentest.NewClock(time.Date(2026, 11, 21, 8, 30, 0, 0, time.UTC))
	gen, err := keygen.NewID("SNOWFLAKE", keygen.Props{"worker-id": "7"}, keygen.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	db, err := gorm.Open(sqlite.Open("file:gormplugin_example?mode=memory&cache=shared"), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := db.Use(gormplugin.New(nil, gormplugin.WithGenerator(gen))); err != nil {
		fmt.Println(err)
		return
	}
	if err := db.AutoMigrate(&Order{}, &OrderItem{}); err != nil {
		fmt.Println(err)
		return
	}

	order := Order{UserID: 42, Items: []OrderItem{{SKU: "apple"}, {SKU: "pear"}}}
	if err := db.Create(&order).Error; err != nil {
		fmt.Println(err)
		return
	}
	parts, _ := gen.(keygen.Decomposer).Decompose(int64(order.ID))
	fmt.Println("order", order.ID, "worker", parts.Worker, "at", parts.Time.Format(time.RFC3339))
	for _, it := range order.Items {
		fmt.Println("item", it.ID, it.SKU, "of order", it.OrderID)
	}

	var stored Order
	db.Preload("Items").First(&stored, order.ID)
	fmt.Println("stored", stored.ID, len(stored.Items), "items")

	var ddl string
	db.Raw("SELECT sql FROM sqlite_master WHERE name = 'orders'").Scan(&ddl)
	fmt.Println(ddl)
	// Output:
	// order 1330816588185628672 worker 7 at 2026-11-21T08:30:00Z
	// item 1330816588185628673 apple of order 1330816588185628672
	// item 1330816588185628674 pear of order 1330816588185628672
	// stored 1330816588185628672 2 items
	// CREATE TABLE `orders` (`id` integer,`user_id` integer,PRIMARY KEY (`id`))
}
