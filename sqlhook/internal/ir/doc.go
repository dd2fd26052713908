// Package ir is what sqlhook's dialect compilers produce and the registry
// that links them in. It imports no SQL parser and not sqlhook, so that
// each dialect's compiler (sqlhook/internal/pgsql, .../mysqlsql) imports
// only this package and its parser, and package sqlhook imports no parser
// at all: a program links the parsers of the dialect packages it imports
// (sqlhook/postgres, sqlhook/mysql, sqlhook/sqlite), as database/sql
// programs link the drivers they import.
//
// A compiler reads the rules through a Schema (logic tables, sharding
// columns, physical names, dialect) and fills a Plan once per statement
// text: the logic tables in table position, the conditions on their
// sharding columns (CNode, reduced to DNF), an INSERT's rows and generated
// key, what merging several targets' rows needs (BuildMerge from a
// SelectShape), and a template of the text with holes where table names,
// placeholders and rows go (BuildTemplate; RenderFor fills it for one
// target). sqlhook binds a Plan to the caller's arguments.
package ir
