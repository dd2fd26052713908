-- t_order as the quickstart's GORM model creates it, written once for the
-- logic table: `shardkey ddl` prints it for every physical table.
CREATE TABLE t_order (
  order_id   BIGINT NOT NULL PRIMARY KEY,
  user_id    BIGINT NOT NULL,
  amount     BIGINT NOT NULL,
  status     VARCHAR(16) NOT NULL,
  created_at TIMESTAMP
);
CREATE INDEX idx_t_order_user_id ON t_order (user_id);
