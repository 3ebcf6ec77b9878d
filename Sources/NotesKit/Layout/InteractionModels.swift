/// The keyboard as the apps handled it: show and hide events carrying the keyboard's height, and
/// what moves in response.
///
/// While the keyboard is up there is exactly one mask over the content (a repeated "show" — the
/// system sends one per frame change — is idempotent; the app once stacked three masks), the chat
/// view moves up by the keyboard height, the search panel sits right above the keyboard, and the
/// article editor's bottom inset is the keyboard height + 5. When it goes down, everything returns:
/// offsets 0, the editor's inset 46.
///
/// ```swift
/// var keyboard = KeyboardModel()
/// try keyboard.show(keyboardHeight: 336)   // editorBottomInset == 341, chatOffset == -336
/// keyboard.hide()                          // editorBottomInset == 46
/// ```
public struct KeyboardModel: Equatable, Sendable {
    /// Between the editor's text and the top of the keyboard.
    public static let editorGapAboveKeyboard = 5.0
    /// The editor's bottom inset while the keyboard is down (room for its toolbar).
    public static let editorRestingInset = 46.0
    /// The tallest keyboard accepted.
    public static let maxKeyboardHeight = 10_000.0

    public private(set) var isShown = false
    /// The keyboard's height while shown, 0 while hidden.
    public private(set) var keyboardHeight = 0.0

    public init() {}

    /// A model in a given state (`keyboardHeight` ignored when not shown).
    public init(isShown: Bool, keyboardHeight: Double) throws {
        if isShown { try show(keyboardHeight: keyboardHeight) }
    }

    /// The keyboard appeared, or changed its frame, with this height. `.validation` unless finite
    /// and within 0...10000.
    public mutating func show(keyboardHeight height: Double) throws {
        guard height.isFinite, height >= 0, height <= KeyboardModel.maxKeyboardHeight else {
            throw NotesError.validation("keyboard_height", "keyboard_height must be a number of pixels between 0 and \(Int(KeyboardModel.maxKeyboardHeight)), got \(height)")
        }
        isShown = true
        keyboardHeight = height
    }

    /// The keyboard went down. Hiding a hidden keyboard does nothing.
    public mutating func hide() {
        isShown = false
        keyboardHeight = 0
    }

    /// How many masks cover the content: 1 while the keyboard is up, else 0 — never more.
    public var maskCount: Int { isShown ? 1 : 0 }
    public var maskVisible: Bool { isShown }
    /// The search panel's vertical offset: −(keyboard + panel height) while typing, so the whole
    /// panel sits above the keyboard; 0 otherwise.
    public var searchPanelOffset: Double { isShown ? -(keyboardHeight + SearchPanel.height) : 0 }
    /// The article editor's bottom content inset.
    public var editorBottomInset: Double {
        isShown ? keyboardHeight + KeyboardModel.editorGapAboveKeyboard : KeyboardModel.editorRestingInset
    }
    /// The chat view's vertical offset: up by the keyboard height while it is shown.
    public var chatOffset: Double { isShown ? -keyboardHeight : 0 }
}

/// The search panel: 105 tall at the bottom of the screen, dragged by its handle, and snapping
/// open when at least 91 of it are revealed at the end of a drag, closed otherwise.
///
/// `drag(dy)` takes the handle's movement in screen coordinates, as a pan gesture reports it
/// (y grows downward): dragging up by 40 is `drag(-40)` and reveals 40 more.
///
/// ```swift
/// var panel = SearchPanel()
/// try panel.drag(-95)
/// panel.endDrag()          // .shown, revealed == 105
/// ```
public struct SearchPanel: Equatable, Sendable {
    public enum State: String, Sendable {
        case hidden, shown
    }

    public static let height = 105.0
    /// Revealed at least this much when the drag ends, the panel snaps open.
    public static let snapThreshold = 91.0

    public private(set) var state: State = .hidden
    /// How much of the panel shows, 0...105.
    public private(set) var revealed = 0.0
    public private(set) var isDragging = false

    public init() {}

    /// A panel in a given state: `revealed` is clamped to 0...105; not dragging, it is 0 or 105.
    public init(state: State, revealed: Double, isDragging: Bool) throws {
        guard revealed.isFinite else { throw NotesError.validation("revealed", "revealed must be a finite number, got \(revealed)") }
        self.state = state
        self.isDragging = isDragging
        self.revealed = isDragging ? min(max(revealed, 0), SearchPanel.height) : (state == .shown ? SearchPanel.height : 0)
    }

    /// The handle moved by `dy` (screen coordinates: negative is up, revealing more). The panel
    /// follows, between fully hidden and fully shown. `.validation` unless `dy` is finite.
    public mutating func drag(_ dy: Double) throws {
        guard dy.isFinite else { throw NotesError.validation("dy", "dy must be a finite number, got \(dy)") }
        isDragging = true
        revealed = min(max(revealed - dy, 0), SearchPanel.height)
    }

    /// The finger lifted: the panel snaps shown when at least ``snapThreshold`` is revealed,
    /// hidden otherwise. Returns the new state.
    @discardableResult
    public mutating func endDrag() -> State {
        isDragging = false
        state = revealed >= SearchPanel.snapThreshold ? .shown : .hidden
        revealed = state == .shown ? SearchPanel.height : 0
        return state
    }

    public mutating func show() {
        isDragging = false
        state = .shown
        revealed = SearchPanel.height
    }

    public mutating func hide() {
        isDragging = false
        state = .hidden
        revealed = 0
    }

    /// The panel's vertical offset from its hidden position (−revealed).
    public var offset: Double { -revealed }
}
