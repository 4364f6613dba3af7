//! Stopping a long computation from outside: the caller runs it under [`watching`] with a
//! `poll` function, and the computation's loops call [`check`] every so often; once `poll`
//! answers true, `check` returns an [`ErrorKind::Aborted`] error, which the loop returns.
//!
//! The poll is kept per thread for the duration of `watching`, so the loops take no extra
//! parameter and a computation run without a watcher is never stopped. Once the poll said
//! stop, every later `check` under the same watcher says so too (a loop that only breaks
//! can leave the error to its caller's `check`). The core knows
//! nothing of what the poll asks: the Python binding asks Python whether a signal (Ctrl-C)
//! is pending.

use std::cell::RefCell;

use crate::error::{Error, ErrorKind, Result};

/// The poll, and whether it already said stop.
type Poll = (Box<dyn FnMut() -> bool>, bool);

thread_local! {
    static POLL: RefCell<Option<Poll>> = const { RefCell::new(None) };
}

/// Run `f` with `poll` as this thread's stop question; the previous one (if any) comes back
/// afterwards, even if `f` panics.
pub fn watching<T>(poll: impl FnMut() -> bool + 'static, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Poll>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            POLL.with(|p| *p.borrow_mut() = previous);
        }
    }
    let _restore = Restore(POLL.with(|p| p.borrow_mut().replace((Box::new(poll), false))));
    f()
}

/// The error a stopped computation returns.
pub fn stopped() -> Error {
    Error::new(ErrorKind::Aborted, "", crate::error::STOPPED)
}

/// `Err(stopped())` if the watcher asks to stop; `Ok` without a watcher. Costs a call of the
/// poll, so call it every few microseconds of work or more, not in the tightest loops (the
/// poll decides how often it really asks, typically by the clock).
pub fn check() -> Result<()> {
    let stop = POLL.with(|p| {
        let Ok(mut p) = p.try_borrow_mut() else { return false };
        let Some((poll, said)) = p.as_mut() else { return false };
        *said = *said || poll();
        *said
    });
    if stop {
        Err(stopped())
    } else {
        Ok(())
    }
}

/// Elements [`checked_seq`] reads between two [`check`]s.
const CHECK_EVERY_ELEMENTS: usize = 4096;

/// A serde `deserialize_with` for a long list of an input (a scheme's communications): reads
/// it element by element with a [`check`] every few thousand, so that parsing a huge file stops
/// on request like any long loop. The error it then returns is the parser's; the watcher knows
/// why it stopped.
pub fn checked_seq<'de, D, T>(deserializer: D) -> std::result::Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    struct Checked<T>(std::marker::PhantomData<T>);
    impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Checked<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Vec<T>, A::Error> {
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(CHECK_EVERY_ELEMENTS));
            loop {
                if items.len() % CHECK_EVERY_ELEMENTS == 0 && check().is_err() {
                    return Err(serde::de::Error::custom(crate::error::STOPPED));
                }
                match seq.next_element()? {
                    Some(item) => items.push(item),
                    None => return Ok(items),
                }
            }
        }
    }
    deserializer.deserialize_seq(Checked(std::marker::PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn check_is_ok_without_a_watcher_and_stops_once_the_poll_says_so() {
        assert!(check().is_ok());
        let calls = Rc::new(Cell::new(0));
        let seen = calls.clone();
        let r = watching(
            move || {
                seen.set(seen.get() + 1);
                seen.get() >= 3
            },
            || -> Result<()> {
                loop {
                    check()?;
                }
            },
        );
        let e = r.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Aborted);
        assert_eq!(calls.get(), 3);
        // Once stopped, stopped: the poll is not asked again.
        let r = watching(|| true, || (check(), check()));
        assert!(r.0.is_err() && r.1.is_err());
        // The watcher is gone afterwards.
        assert!(check().is_ok());
    }

    #[test]
    fn a_checked_list_reads_whole_without_a_stop_and_stops_when_asked() {
        #[derive(serde::Deserialize)]
        struct Doc {
            #[serde(deserialize_with = "checked_seq")]
            items: Vec<u32>,
        }
        let text = format!("{{\"items\": [{}]}}", vec!["7"; 10_000].join(","));
        let doc: Doc = serde_json::from_str(&text).unwrap();
        assert_eq!(doc.items.len(), 10_000);
        let stopped = watching(|| true, || serde_json::from_str::<Doc>(&text).map(|d| d.items.len()));
        assert!(stopped.unwrap_err().to_string().contains("stopped by the caller"));
    }

    #[test]
    fn an_inner_watcher_gives_the_outer_one_back() {
        let r = watching(
            || true,
            || {
                watching(|| false, || assert!(check().is_ok()));
                check()
            },
        );
        assert!(r.is_err());
    }
}
