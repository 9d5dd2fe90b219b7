export interface User {
  id: number;
  email: string;
  displayName string;
  roles: string[];
  lastLogin?: Date;
}

export function isAdmin(user: User): boolean {
  return user.roles.includes("admin");
}

export function describe(user: User): string {
  const seen = user.lastLogin ? user.lastLogin.toISOString() : "never";
  return `${user.displayName} <${user.email}> last seen ${seen}`;
}

export function byEmail(users: User[]): Map<string, User> {
  return new Map(users.map((user) => [user.email.toLowerCase(), user]));
}

const users: User[] = [
  { id: 1, email: "ana@example.com", displayName: "Ana", roles: ["admin"] },
  { id: 2, email: "bo@example.com", displayName: "Bo", roles: [] },
];
console.log(users.filter(isAdmin).map(describe));
