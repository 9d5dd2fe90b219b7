use std::collections::VecDeque;

/// A fixed-size ring buffer that keeps the most recent values.
pub struct Recent<T> {
    items: VecDeque<T>,
    capacity: usize,
}

impl<T: Clone> Recent<T> {
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "capacity must be positive");
        Recent {
            items: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    pub fn push(&mut self, value: T) {
        if self.items.len() == self.capacity {
            self.items.pop_front();
        }
        self.items.push_back(value);
    }

    pub fn latest(&self) -> Option<&T> {
        self.items.back()
    }

    pub fn to_vec(&self) -> Vec<T> {
        self.items.iter().cloned().collect()
    }
}

fn main() {
    let mut recent = Recent::new(3);
    for n in 1..=5 {
        recent.push(n);
    }
    println!("{:?} latest={:?}", recent.to_vec(), recent.latest());
}
