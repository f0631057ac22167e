/** The name a workspace root goes by: its real path's last component ("/" for the root). */
export function rootNameOf(rootReal: string): string {
  const parts = rootReal.split("/").filter(Boolean);
  return parts.length ? parts[parts.length - 1] : "/";
}
