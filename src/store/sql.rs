//! What the state machine needs of a database, and nothing more: statements with numbered
//! parameters (`?1`, `?2`, …), run inside one transaction, over four kinds of value. The state
//! machine (`super`) is written once against [`Tx`]; `sqlite.rs` and `postgres.rs` each run it
//! on their own driver. Statements are `&'static str` in the subset of SQL both dialects read
//! alike (`INSERT … ON CONFLICT`, no `LIMIT -1`, no `COLLATE` in queries, a parameter tested
//! with `IS NULL` cast to its type), so each driver can cache what it prepared by the
//! statement's text.
//!
//! One difference is written into the statements: a query that ends in `/*FOR UPDATE*/` (or
//! `/*FOR UPDATE OF <alias>*/`, for a join) holds the rows it read until the transaction ends.
//! PostgreSQL reads it as that clause; SQLite, whose write transaction holds the whole file
//! already, as the comment it is.

use super::{StoreError, StoreResult};

/// A parameter of a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param<'a> {
    Null,
    Int(i64),
    Text(&'a str),
    Bool(bool),
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(v: &'a str) -> Self {
        Param::Text(v)
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(v: &'a String) -> Self {
        Param::Text(v)
    }
}

impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Param::Int(v)
    }
}

impl From<bool> for Param<'_> {
    fn from(v: bool) -> Self {
        Param::Bool(v)
    }
}

impl<'a, T: Into<Param<'a>>> From<Option<T>> for Param<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Param::Null, Into::into)
    }
}

impl<'a> From<&'a Option<String>> for Param<'a> {
    fn from(v: &'a Option<String>) -> Self {
        v.as_deref().into()
    }
}

/// The parameters of one statement, each converted to a [`Param`].
macro_rules! args {
    ($($value:expr),* $(,)?) => {
        &[$($crate::store::sql::Param::from($value)),*][..]
    };
}
pub(crate) use args;

/// One value read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    Null,
    Int(i64),
    Text(String),
    Bool(bool),
}

/// One row read back, its cells in the order of the statement's columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row(pub Vec<Cell>);

/// A column read back as a Rust value.
pub trait FromCell: Sized {
    fn from_cell(cell: Cell) -> Option<Self>;
}

impl FromCell for String {
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl FromCell for i64 {
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Int(n) => Some(n),
            _ => None,
        }
    }
}

/// SQLite has no booleans (0 or 1); PostgreSQL has.
impl FromCell for bool {
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Bool(b) => Some(b),
            Cell::Int(n) => Some(n != 0),
            _ => None,
        }
    }
}

impl<T: FromCell> FromCell for Option<T> {
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Null => Some(None),
            other => T::from_cell(other).map(Some),
        }
    }
}

impl Row {
    /// Column `i` as a `T`; a missing column or a value of another kind is a store error
    /// (a file or database whose schema is not the one this build wrote).
    pub fn get<T: FromCell>(&mut self, i: usize) -> StoreResult<T> {
        let cell = self
            .0
            .get_mut(i)
            .map(|cell| std::mem::replace(cell, Cell::Null));
        cell.and_then(T::from_cell).ok_or_else(|| {
            StoreError::io(format!(
                "codemode store: column {i} of a row has an unexpected type"
            ))
        })
    }
}

/// A transaction of one database: every statement of one decision runs in the same one.
pub trait Tx {
    /// Runs a statement that returns no rows; how many rows it changed.
    fn execute(&mut self, sql: &'static str, params: &[Param<'_>]) -> StoreResult<usize>;
    /// Runs a query; its rows.
    fn query(&mut self, sql: &'static str, params: &[Param<'_>]) -> StoreResult<Vec<Row>>;

    /// The first row of a query, if any.
    fn query_opt(&mut self, sql: &'static str, params: &[Param<'_>]) -> StoreResult<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_convert_from_the_values_the_machine_holds() {
        let key: Option<&str> = None;
        let owner = Some("o".to_string());
        assert_eq!(
            args!["a", 3i64, true, key, &owner, Some(5i64)],
            &[
                Param::Text("a"),
                Param::Int(3),
                Param::Bool(true),
                Param::Null,
                Param::Text("o"),
                Param::Int(5)
            ]
        );
    }

    #[test]
    fn cells_read_back_as_their_kind_or_fail() {
        let mut row = Row(vec![
            Cell::Text("t".into()),
            Cell::Null,
            Cell::Int(1),
            Cell::Bool(false),
        ]);
        assert_eq!(row.get::<String>(0).unwrap(), "t");
        assert_eq!(row.get::<Option<i64>>(1).unwrap(), None);
        assert!(row.get::<bool>(2).unwrap());
        assert!(!row.get::<bool>(3).unwrap());
        assert!(row.get::<i64>(0).is_err(), "taken already: now null");
        assert!(row.get::<String>(9).is_err());
        let mut wrong = Row(vec![Cell::Int(1)]);
        assert!(wrong.get::<String>(0).is_err());
    }
}
