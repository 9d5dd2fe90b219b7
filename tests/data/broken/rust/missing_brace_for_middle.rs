use std::collections::BTreeMap;

enum Command {
    Add(String, u32),
    Remove(String),
    List { verbose: bool },
}

fn run(inventory: &mut BTreeMap<String, u32>, command: Command) {
    match command {
        Command::Add(item, count) => {
            *inventory.entry(item).or_insert(0) += count;
        }
        Command::Remove(item) => {
            inventory.remove(&item);
        }
        Command::List { verbose } => {
            if verbose {
                for (item, count) in inventory.iter() {
                    println!("{:<12} {:>4}", item, count);
            } else {
                println!("{} kinds of item", inventory.len());
            }
        }
    }
}

fn main() {
    let mut inventory = BTreeMap::new();
    run(&mut inventory, Command::Add("bolts".into(), 40));
    run(&mut inventory, Command::Add("nuts".into(), 25));
    run(&mut inventory, Command::Remove("nuts".into()));
    run(&mut inventory, Command::List { verbose: true });
}
