/// The one version number of FoodMoment: the CLI's and the server's `--version`, the User-Agent of its HTTP requests,
/// the OpenAPI document's `info.version`, the git tag, CHANGELOG.md's newest entry and the README's dependency line
/// (`VersionTests` holds them to this).
public enum FoodMomentVersion {
    public static let string = "0.7.0"
}
