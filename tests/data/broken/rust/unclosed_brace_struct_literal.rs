use std::collections::HashMap;

struct Account {
    owner: String,
    balance_cents: i64,
    frozen: bool,
}

struct Bank {
    accounts: HashMap<u32, Account>,
    next_id: u32,
}

impl Bank {
    fn new() -> Self {
        Bank { accounts: HashMap::new(), next_id: 1 }
    }

    fn open(&mut self, owner: &str, deposit_cents: i64) -> u32 {
        let id = self.next_id;
        let account = Account {
            owner: owner.to_string(),
            balance_cents: deposit_cents,
            frozen: false,
        ;
        self.accounts.insert(id, account);
        self.next_id += 1;
        id
    }

    fn balance(&self, id: u32) -> Option<i64> {
        self.accounts.get(&id).filter(|a| !a.frozen).map(|a| a.balance_cents)
    }
}

fn main() {
    let mut bank = Bank::new();
    let id = bank.open("ana", 10_000);
    println!("{}: {:?}", bank.accounts[&id].owner, bank.balance(id));
}
