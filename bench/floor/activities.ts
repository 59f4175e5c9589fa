export async function model(i: number): Promise<number> {
  return i;
}
export async function tool(i: number): Promise<number> {
  return i;
}
