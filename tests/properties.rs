//! Property test: random sequences of insert, update, delete and read
//! against the real server and store, compared after every step with a
//! plain in-memory model of the sheet — row numbers, filters and typed
//! values must agree after any sequence.

mod common;

use calamine::Data;
use common::*;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// One row of the model: id (number), name (text), flag (boolean).
type Row = [Option<Value>; 3];
const COLUMNS: [&str; 3] = ["id", "name", "flag"];

#[derive(Debug, Clone)]
enum Filter {
    IdEq(i64),
    IdGt(i64),
    IdIsNull,
    NameEq(&'static str),
    NameNeq(&'static str),
    NameLikeA,
    FlagIsTrue,
}

#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<Row>),
    UpdateRow(u64, Row),
    UpdateFilter(Filter, Row),
    DeleteRow(u64),
    DeleteFilter(Filter),
    Read(Filter),
}

fn id() -> impl Strategy<Value = Option<Value>> {
    prop::option::of((0i64..5).prop_map(Value::from))
}
fn name() -> impl Strategy<Value = Option<Value>> {
    prop::option::of(prop::sample::select(vec!["ann", "bob", "abe"]).prop_map(Value::from))
}
fn flag() -> impl Strategy<Value = Option<Value>> {
    prop::option::of(any::<bool>().prop_map(Value::from))
}
fn row() -> impl Strategy<Value = Row> {
    (id(), name(), flag()).prop_map(|(a, b, c)| [a, b, c])
}
fn filled_row() -> impl Strategy<Value = Row> {
    row().prop_filter("sets a value", |r| r.iter().any(Option::is_some))
}
fn filter() -> impl Strategy<Value = Filter> {
    prop_oneof![
        (0i64..5).prop_map(Filter::IdEq),
        (0i64..5).prop_map(Filter::IdGt),
        Just(Filter::IdIsNull),
        prop::sample::select(vec!["ann", "bob"]).prop_map(Filter::NameEq),
        prop::sample::select(vec!["ann", "bob"]).prop_map(Filter::NameNeq),
        Just(Filter::NameLikeA),
        Just(Filter::FlagIsTrue),
    ]
}
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        prop::collection::vec(filled_row(), 0..4).prop_map(Op::Insert),
        (1u64..9, filled_row()).prop_map(|(n, r)| Op::UpdateRow(n, r)),
        (filter(), filled_row()).prop_map(|(f, r)| Op::UpdateFilter(f, r)),
        (1u64..9).prop_map(Op::DeleteRow),
        filter().prop_map(Op::DeleteFilter),
        filter().prop_map(Op::Read),
    ]
}

impl Filter {
    fn expr(&self) -> String {
        match self {
            Filter::IdEq(k) => format!("id:eq:{k}"),
            Filter::IdGt(k) => format!("id:gt:{k}"),
            Filter::IdIsNull => "id:is:null".into(),
            Filter::NameEq(s) => format!("name:eq:{s}"),
            Filter::NameNeq(s) => format!("name:neq:{s}"),
            Filter::NameLikeA => "name:like:a*".into(),
            Filter::FlagIsTrue => "flag:is:true".into(),
        }
    }

    /// The contract's rule, written out for these three typed columns.
    fn matches(&self, row: &Row) -> bool {
        let id = row[0].as_ref().and_then(Value::as_i64);
        let name = row[1].as_ref().and_then(Value::as_str);
        match self {
            Filter::IdEq(k) => id == Some(*k),
            Filter::IdGt(k) => id.is_some_and(|v| v > *k),
            Filter::IdIsNull => id.is_none(),
            Filter::NameEq(s) => name == Some(*s),
            Filter::NameNeq(s) => name != Some(*s),
            Filter::NameLikeA => name.is_some_and(|n| n.starts_with('a')),
            Filter::FlagIsTrue => row[2] == Some(Value::Bool(true)),
        }
    }
}

/// The sheet as the model sees it; data rows are numbered from 2.
#[derive(Default)]
struct Model {
    rows: Vec<Row>,
}

impl Model {
    /// Data rows end at the last row holding anything.
    fn trim(&mut self) {
        while self
            .rows
            .last()
            .is_some_and(|r| r.iter().all(Option::is_none))
        {
            self.rows.pop();
        }
    }

    /// The index into `rows` of sheet row `n` (the header is row 1), or
    /// the status a request naming it gets: 400 for the header row or
    /// above, 404 below the last data row.
    fn data_index(&self, n: u64) -> Result<usize, u16> {
        match (n as usize).checked_sub(2) {
            None => Err(400),
            Some(i) if i >= self.rows.len() => Err(404),
            Some(i) => Ok(i),
        }
    }

    fn matching(&self, filter: &Filter) -> Vec<usize> {
        (0..self.rows.len())
            .filter(|&i| filter.matches(&self.rows[i]))
            .collect()
    }

    fn read(&self, filter: Option<&Filter>) -> Value {
        let data: Vec<Value> = (0..self.rows.len())
            .filter(|&i| filter.is_none_or(|f| f.matches(&self.rows[i])))
            .map(|i| {
                let mut object = Map::new();
                object.insert("_row".into(), json!(i + 2));
                for (c, column) in COLUMNS.iter().enumerate() {
                    object.insert(
                        (*column).into(),
                        self.rows[i][c].clone().unwrap_or(Value::Null),
                    );
                }
                Value::Object(object)
            })
            .collect();
        json!({"total": data.len(), "data": data})
    }
}

fn as_object(row: &Row, skip_nulls: bool) -> Value {
    let mut object = Map::new();
    for (c, column) in COLUMNS.iter().enumerate() {
        match &row[c] {
            Some(v) => object.insert((*column).into(), v.clone()),
            None if skip_nulls => None,
            None => object.insert((*column).into(), Value::Null),
        };
    }
    Value::Object(object)
}

/// Applies `op` to the server and the model; checks the answer agrees.
async fn step(server: &Server, model: &mut Model, op: &Op) -> Result<(), TestCaseError> {
    let path = rows_path("S");
    match op {
        Op::Insert(rows) => {
            let data: Vec<Value> = rows.iter().map(|r| as_object(r, true)).collect();
            let (status, body) = server.post(&path, json!({ "data": data })).await;
            prop_assert_eq!(status.as_u16(), 201, "{}", body);
            prop_assert_eq!(&body, &json!({"inserted": rows.len()}));
            model.rows.extend(rows.iter().cloned());
        }
        Op::UpdateRow(n, values) => {
            let body = json!({"type": "row", "row": n, "data": as_object(values, false)});
            let (status, answer) = server.patch(&path, body).await;
            match model.data_index(*n) {
                Err(expected) => prop_assert_eq!(status.as_u16(), expected),
                Ok(i) => {
                    prop_assert_eq!(status.as_u16(), 200, "{}", answer);
                    model.rows[i] = values.clone();
                }
            }
        }
        Op::UpdateFilter(filter, values) => {
            let body = json!({"type": "filter", "filter": filter.expr(), "data": as_object(values, false)});
            let (_, answer) = server.patch(&path, body).await;
            let matched = model.matching(filter);
            prop_assert_eq!(&answer, &json!({"updated": matched.len()}));
            for i in matched {
                model.rows[i] = values.clone();
            }
        }
        Op::DeleteRow(n) => {
            let (status, answer) = server.delete(&path, json!({"type": "row", "row": n})).await;
            match model.data_index(*n) {
                Err(expected) => prop_assert_eq!(status.as_u16(), expected),
                Ok(i) => {
                    prop_assert_eq!(&answer, &json!({"deleted": 1}));
                    model.rows.remove(i);
                }
            }
        }
        Op::DeleteFilter(filter) => {
            let (_, answer) = server
                .delete(&path, json!({"type": "filter", "filter": filter.expr()}))
                .await;
            let matched = model.matching(filter);
            prop_assert_eq!(&answer, &json!({"deleted": matched.len()}));
            for i in matched.into_iter().rev() {
                model.rows.remove(i);
            }
        }
        Op::Read(filter) => {
            let (_, answer) = server
                .get(&format!("{path}?filter={}", filter.expr()))
                .await;
            prop_assert_eq!(answer, model.read(Some(filter)));
        }
    }
    model.trim();
    let (_, all) = server.get(&format!("{path}?limit=100000")).await;
    prop_assert_eq!(all, model.read(None), "after {:?}", op);
    Ok(())
}

/// The model's rows as calamine reads them back from disk.
fn expected_grid(model: &Model) -> Vec<Vec<Data>> {
    let header = COLUMNS.iter().map(|c| Data::String((*c).into())).collect();
    let rows = model.rows.iter().map(|row| {
        row.iter()
            .map(|v| match v {
                None => Data::Empty,
                Some(Value::Bool(b)) => Data::Bool(*b),
                Some(Value::String(s)) => Data::String(s.clone()),
                Some(n) => Data::Float(n.as_f64().unwrap()),
            })
            .collect()
    });
    std::iter::once(header).chain(rows).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_agrees_with_the_model(ops in prop::collection::vec(op(), 1..14)) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let server = Server::start().await;
            make_workbook(
                &server.file(ID),
                &[("S", vec![vec![Spec::S("id"), Spec::S("name"), Spec::S("flag")]])],
            );
            let mut model = Model::default();
            for op in &ops {
                step(&server, &mut model, op).await?;
            }
            assert_grid_eq(&read_sheet(&server.file(ID), "S"), &expected_grid(&model));
            Ok::<(), TestCaseError>(())
        })?;
    }
}
