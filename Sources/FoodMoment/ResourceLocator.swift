import FoodRecognition
import Foundation

/// Finds a bundled resource folder (`models/`, `nutrition-db/`) without `../shared/data`: a variable of the
/// `environment` the executable passes first (the library reads no environment of its own), then beside the executable or up to six folders above it (a SwiftPM build puts the binary in
/// `.build/release/`), then the current directory.
public enum ResourceLocator {
    public static func directory(named name: String, environmentVariable: String, containing marker: String,
                                 environment: [String: String],
                                 executablePath: String = CommandLine.arguments.first ?? "") -> String {
        if let env = environment[environmentVariable], !env.isEmpty { return env }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? executablePath
        var dir = URL(fileURLWithPath: exe).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = dir.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent(marker).path) { return candidate.path }
            let parent = dir.deletingLastPathComponent()
            if parent.path == dir.path { break }
            dir = parent
        }
        return FileManager.default.currentDirectoryPath + "/" + name
    }

    /// `models/` (override with FOODMOMENT_MODELS).
    public static func modelsDirectory(environment: [String: String]) -> String {
        directory(named: "models", environmentVariable: "FOODMOMENT_MODELS", containing: "efficientnet-lite0/manifest.json",
                  environment: environment)
    }

    /// The user's data folder for learned foods and the diary: `$FOODMOMENT_HOME`, else
    /// `$XDG_DATA_HOME/foodmoment`, else `~/.local/share/foodmoment`.
    public static func userDataDirectory(environment env: [String: String]) -> String {
        if let home = env["FOODMOMENT_HOME"], !home.isEmpty { return home }
        if let xdg = env["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/foodmoment" }
        return (env["HOME"] ?? NSHomeDirectory()) + "/.local/share/foodmoment"
    }
}
