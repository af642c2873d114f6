import ArgumentParser

/// The `gateway` command: one tool for many storage backends.
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Treat many storage backends as one: list, inspect, copy and move files between remotes.",
        discussion: HelpText.reflow("""
        Locations are REMOTE:PATH, where REMOTE is a name from the config file (see `gateway remotes`),
        or a plain local path. A path with a colon in its first component is written ./a:b.

        Config: --config FILE, else $GATEWAY_CONFIG, else $XDG_CONFIG_HOME/gateway/config.json
        (~/.config/gateway/config.json). Without any, plain paths are the local file system.
        Any key can be overridden with GATEWAY_REMOTE_<NAME>_<KEY>.

        Exit codes: 0 success, 1 an operation failed, 2 usage or config error, 3 a plan changed or is
        invalid (make a new one), 130 interrupted.

        Examples:
          gateway ls -l docs:reports
          gateway copy ./photos backup:2026/photos
          gateway cat --offset 100 --count 50 docs:log.txt
          gateway about --json docs:
          gateway watch -R --state inbox.anchor dav:inbox
          gateway rm -r docs:old && gateway undo
        """),
        version: "0.1.0",
        subcommands: [
            RemotesCommand.self, ConfigCommand.self, ListCommand.self, StatCommand.self, CatCommand.self,
            RcatCommand.self, MkdirCommand.self, RemoveCommand.self, CopyCommand.self, MoveCommand.self,
            SyncCommand.self, CheckCommand.self, PlanCommand.self, FinalizeCommand.self, PlanStatusCommand.self, AboutCommand.self, WatchCommand.self, UndoCommand.self, TrashCommand.self,
            ThumbnailCommand.self, MetaCommand.self, ServeCommand.self, MountCommand.self, LinkCommand.self, CleanupCommand.self,
            PinCommand.self, UnpinCommand.self, EvictCommand.self, MountStatusCommand.self,
        ]
    )
}
