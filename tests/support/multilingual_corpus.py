# ruff: noqa: E501  (data: one note a line)
"""A small multilingual vault and the phrases a reader would search it by.

Each note is written as a person would keep it (a line or two of a daily log or a note), in
one script or mixed with English and code. Each query is a phrase copied from its note (an
exact phrase: keyword recall is measured on these) or the same phrase as a reader might type
it instead (no accents, full-width letters, simplified for the variant a keyboard gives):
`variant=True`. Notes of the same script share characters and words with each other on
purpose, so a query has to find its own note among look-alikes.
"""

from __future__ import annotations

from typing import NamedTuple


class Note(NamedTuple):
    name: str
    script: str
    text: str


class Query(NamedTuple):
    note: str  # the note the query is about
    text: str
    variant: bool = False  # typed otherwise than written (folding must bridge it)


NOTES = [
    # Chinese (simplified and traditional)
    Note("zh-server", "chinese", "今天把支付服务迁移到新的数据库服务器，迁移窗口是晚上十点。"),
    Note("zh-dinner", "chinese", "周五和小王在海底捞吃火锅，他说下个月要去上海出差。"),
    Note("zh-travel", "chinese", "上海的酒店已经订好了，靠近地铁二号线，步行五分钟。"),
    Note("zh-book", "chinese", "读完了《三体》第二部，黑暗森林的设定很有意思。"),
    Note("zh-cat", "chinese", "猫今天不吃东西，明天带它去看兽医。"),
    Note("zh-db", "chinese", "数据库备份每天凌晨三点运行，保留三十天。"),
    Note("zh-tw-meeting", "chinese", "與客戶的會議改到星期四下午兩點，地點在台北辦公室。"),
    Note("zh-tw-food", "chinese", "台北夜市的蚵仔煎真的很好吃，下次帶朋友一起去。"),
    # Japanese
    Note("ja-tower", "japanese", "週末に東京タワーへ行った。夜景がとてもきれいだった。"),
    Note("ja-deploy", "japanese", "本番環境へのデプロイは金曜日の午後に延期になりました。"),
    Note("ja-dentist", "japanese", "歯医者の予約を来週の火曜日に変更した。"),
    Note("ja-kyoto", "japanese", "京都で抹茶のパフェを食べた。清水寺は人が多かった。"),
    Note("ja-tokyo-move", "japanese", "東京から大阪に引っ越す予定。新しいアパートは駅から近い。"),
    Note("ja-meeting", "japanese", "山田さんとの打ち合わせで、新しいロゴのデザインを決めた。"),
    Note("ja-katakana", "japanese", "ｶﾀｶﾅで書かれた古い請求書をスキャンした。"),
    Note("ja-cat", "japanese", "うちの猫がキーボードの上で寝ている。"),
    # Korean
    Note("ko-seoul", "korean", "서울에서 친구를 만나서 삼겹살을 먹었다."),
    Note("ko-project", "korean", "새 프로젝트 마감일이 다음 주 금요일로 정해졌다."),
    Note("ko-busan", "korean", "부산 여행은 기차로 가기로 했다. 해운대 근처 숙소를 예약했다."),
    Note("ko-bug", "korean", "로그인 버그는 세션 만료 시간 때문이었다. 수정 완료."),
    Note("ko-gym", "korean", "헬스장 등록은 월요일부터 시작한다."),
    Note("ko-seoul-office", "korean", "서울 사무실 이전 계획을 팀에 공유했다."),
    # Accented Latin
    Note(
        "fr-cafe",
        "latin",
        "Rendez-vous au café de la gare avec Hélène pour parler du déménagement.",
    ),
    Note(
        "fr-recette", "latin", "Recette de la crème brûlée : quatre jaunes d'œufs, sucre, vanille."
    ),
    Note(
        "de-strasse",
        "latin",
        "Die Wohnung in der Goethestraße ist größer, aber die Miete ist höher.",
    ),
    Note(
        "de-arzt",
        "latin",
        "Termin beim Zahnarzt am Dienstag verschoben; Jürgen übernimmt die Übergabe.",
    ),
    Note("es-nino", "latin", "El cumpleaños de la niña es el sábado; comprar piñata y pastel."),
    Note("pt-reuniao", "latin", "A reunião com o João foi adiada para a próxima terça-feira."),
    Note("pl-lodz", "latin", "Pociąg do Łodzi odjeżdża o ósmej; bilety kupione przez aplikację."),
    Note(
        "vi-hanoi", "latin", "Chuyến đi Hà Nội tháng sau, nhớ đặt phòng khách sạn gần hồ Hoàn Kiếm."
    ),
    Note("cs-praha", "latin", "Schůzka v Praze se přesouvá na čtvrtek, Tomáš pošle podklady."),
    Note("tr-istanbul", "latin", "İstanbul'daki toplantı için uçak bileti alındı, çarşamba dönüş."),
    # Cyrillic
    Note("ru-elka", "cyrillic", "Купили ёлку на рынке, Алёна украсит её в субботу."),
    Note(
        "ru-server", "cyrillic", "Сервер базы данных перезапустили после обновления, всё работает."
    ),
    Note("ru-vacation", "cyrillic", "Отпуск в августе: Сочи, гостиница у моря, билеты на поезд."),
    Note("uk-kyiv", "cyrillic", "Зустріч у Києві перенесли на п'ятницю, Олена підготує звіт."),
    Note(
        "bg-sofia", "cyrillic", "Командировка до София през октомври, хотелът е близо до центъра."
    ),
    Note("ru-doctor", "cyrillic", "Запись к врачу на четверг, взять результаты анализов."),
    # Greek
    Note("el-athens", "greek", "Η συνάντηση στην Αθήνα μεταφέρθηκε την Τρίτη το πρωί."),
    Note("el-island", "greek", "Διακοπές στη Νάξο τον Ιούλιο, το πλοίο φεύγει από τον Πειραιά."),
    Note("el-doctor", "greek", "Ραντεβού με τον γιατρό την Πέμπτη για τις εξετάσεις."),
    Note("el-work", "greek", "Η νέα έκδοση της εφαρμογής κυκλοφορεί την επόμενη εβδομάδα."),
    # Mixed scripts, with English and code
    Note("mix-api", "mixed", "The 支付 API returns ERR_LEDGER_409 when the 订单 is duplicated."),
    Note(
        "mix-release", "mixed", "v2.1 のリリースノートを書いた。Breaking changes は config だけ。"
    ),
    Note("mix-korean-dev", "mixed", "PR #42 리뷰 완료: 캐시 invalidation 로직을 고쳤다."),
    Note("mix-fullwidth", "mixed", "ＡＰＩキーを更新した。古いキーは無効になった。"),
    Note("mix-russian-code", "mixed", "Функция parse_config() падает на пустом файле — исправить."),
    Note("mix-names", "mixed", "Lunch with Zoë and 李明 at Café Müller, then a call with Søren."),
]

QUERIES = [
    Query("zh-server", "数据库服务器"),
    Query("zh-server", "迁移窗口"),
    Query("zh-dinner", "海底捞吃火锅"),
    Query("zh-travel", "地铁二号线"),
    Query("zh-book", "黑暗森林"),
    Query("zh-cat", "兽医"),
    Query("zh-db", "数据库备份"),
    Query("zh-tw-meeting", "會議改到星期四"),
    Query("zh-tw-food", "蚵仔煎"),
    Query("ja-tower", "東京タワー"),
    Query("ja-tower", "夜景"),
    Query("ja-deploy", "本番環境へのデプロイ"),
    Query("ja-dentist", "歯医者の予約"),
    Query("ja-kyoto", "抹茶のパフェ"),
    Query("ja-kyoto", "清水寺"),
    Query("ja-tokyo-move", "大阪に引っ越す"),
    Query("ja-meeting", "新しいロゴ"),
    Query("ja-katakana", "カタカナ", variant=True),  # written in half-width kana
    Query("ja-cat", "キーボード"),
    Query("ko-seoul", "삼겹살"),
    Query("ko-seoul", "서울에서 친구"),
    Query("ko-project", "마감일"),
    Query("ko-busan", "해운대"),
    Query("ko-bug", "세션 만료"),
    Query("ko-gym", "헬스장 등록"),
    Query("ko-seoul-office", "사무실 이전"),
    Query("fr-cafe", "café de la gare"),
    Query("fr-cafe", "cafe de la gare", variant=True),
    Query("fr-cafe", "Helene", variant=True),
    Query("fr-recette", "crème brûlée"),
    Query("fr-recette", "creme brulee", variant=True),
    Query("de-strasse", "Goethestraße"),
    Query("de-strasse", "Goethestrasse", variant=True),
    Query("de-arzt", "Jürgen übernimmt"),
    Query("de-arzt", "Jurgen", variant=True),
    Query("es-nino", "cumpleaños de la niña"),
    Query("es-nino", "pinata", variant=True),
    Query("pt-reuniao", "reunião com o João"),
    Query("pt-reuniao", "reuniao", variant=True),
    Query("pl-lodz", "Pociąg do Łodzi"),
    Query("pl-lodz", "Lodzi", variant=True),
    Query("vi-hanoi", "Hà Nội"),
    Query("vi-hanoi", "Hoan Kiem", variant=True),
    Query("cs-praha", "Schůzka v Praze"),
    Query("cs-praha", "Tomas", variant=True),
    Query("tr-istanbul", "toplantı için uçak"),
    Query("ru-elka", "ёлку на рынке"),
    Query("ru-elka", "елку", variant=True),
    Query("ru-elka", "Алена", variant=True),
    Query("ru-server", "Сервер базы данных"),
    Query("ru-vacation", "гостиница у моря"),
    Query("uk-kyiv", "Зустріч у Києві"),
    Query("bg-sofia", "Командировка до София"),
    Query("ru-doctor", "результаты анализов"),
    Query("el-athens", "συνάντηση στην Αθήνα"),
    Query("el-athens", "Αθηνα", variant=True),
    Query("el-island", "Νάξο"),
    Query("el-doctor", "Ραντεβού με τον γιατρό"),
    Query("el-work", "νέα έκδοση"),
    Query("mix-api", "支付 API"),
    Query("mix-api", "订单"),
    Query("mix-release", "リリースノート"),
    Query("mix-korean-dev", "캐시 invalidation"),
    Query("mix-fullwidth", "APIキー", variant=True),  # written with full-width letters
    Query("mix-russian-code", "пустом файле"),
    Query("mix-names", "Zoe", variant=True),
    Query("mix-names", "李明"),
    Query("mix-names", "Cafe Muller", variant=True),
]
